/**
 * The tax reform group of a DPS (`IBSCBS`, layout v1.01 as NT 004 v2, NT 005 and NT 007 shaped it)
 * in our JSON: what the provider declares about IBS and CBS. The rates and amounts are not part of
 * it: the national system computes them into the NFS-e (see IbsCbsAmounts.ts and
 * docs/tax-reform.md). Optional in 2026; when present it is validated in full, as the authority does
 * ("todo o conjunto de validações de conteúdo desses grupos passa a ser aplicado").
 *
 * `decodeIbsCbs` runs the schema and then the rules of the official tables (IbsCbsTables.ts), and
 * names our own fields (`ibs_cbs.cst`, …) in every message.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { described } from "./Described.js"
import { emailAddress } from "./Email.js"
import { NFSE_TAX_CLASSES, TAX_SITUATIONS } from "./IbsCbsTables.js"
import { TaxId } from "./TaxId.js"
import { boundedText } from "./Text.js"

const digits = (n: number, field: string, what: string) =>
  Schema.String.check(Schema.isPattern(new RegExp(`^[0-9]{${n}}$`, "u"), { message: `${field} must be ${what}` }))

/** A percentage with up to two decimals, 0 to 100 (the schema's TSDec3V2 within a percentage). */
export const Percent = Schema.String.check(
  Schema.isPattern(/^(100(\.0{1,2})?|[0-9]{1,2}(\.[0-9]{1,2})?)$/u, {
    message: "must be a percentage from 0 to 100 with at most two decimals, e.g. \"40\" or \"12.5\""
  })
)

export const IbsCbsDestination = Schema.Struct({
  tax_id: Schema.optionalKey(TaxId.pipe(described({
    description: "The destination's CPF or CNPJ: becomes `IBSCBS/dest/CPF` or `dest/CNPJ`. Give it or `nif`."
  }))),
  nif: Schema.optionalKey(
    boundedText(40).pipe(described({
      description: "A foreign destination's tax id (NIF), 1–40 characters: becomes `IBSCBS/dest/NIF`."
    }))
  ),
  name: boundedText(150).pipe(described({ description: "The destination's name: becomes `IBSCBS/dest/xNome`." })),
  email: Schema.optionalKey(
    emailAddress(Schema.String).annotate({ description: "Becomes `IBSCBS/dest/email` (at most 80 characters)." })
  )
}).annotate({
  identifier: "IbsCbsDestination",
  description: "Who receives the service when it is not the taker (tomador = adquirente ≠ destinatário)."
})
export type IbsCbsDestination = typeof IbsCbsDestination.Type

export const IbsCbs = Schema.Struct({
  operation_indicator: digits(6, "ibs_cbs.operation_indicator", "the 6-digit operation indicator (cIndOp)")
    .annotate({
      description: "Operation indicator, 6 digits, from the national table \"código indicador da operação\" " +
        "(Anexo VII of the reform's technical notes; it tells where the operation takes place): becomes " +
        "`IBSCBS/cIndOp`. The authority refuses a code outside the table (E0901).",
      examples: ["100301"]
    }),
  personal_use: Schema.optionalKey(Schema.Boolean).annotate({
    description: "The service is for the acquirer's personal use or consumption (LC 214/2025, art. 57): " +
      "becomes `IBSCBS/indFinal` (true → 1, false → 0; absent → omitted)."
  }),
  destination: Schema.optionalKey(IbsCbsDestination).annotate({
    description: "The destination when it differs from the taker: becomes `IBSCBS/indDest` 1 and the " +
      "`IBSCBS/dest` group. Absent: `indDest` 0 (the taker is the destination)."
  }),
  cst: digits(3, "ibs_cbs.cst", "the 3-digit IBS/CBS tax situation code (CST)").annotate({
    description: "IBS/CBS tax situation code (CST), from the official CST table: becomes " +
      "`IBSCBS/valores/trib/gIBSCBS/CST`.",
    examples: ["000"]
  }),
  class_code: digits(6, "ibs_cbs.class_code", "the 6-digit tax classification code (cClassTrib)").annotate({
    description: "Tax classification code (cClassTrib), from the official table, valid for the NFS-e and " +
      "starting with the CST: becomes `IBSCBS/valores/trib/gIBSCBS/cClassTrib`. Its rate reductions " +
      "apply to the computed rates.",
    examples: ["000001"]
  }),
  regular_taxation: Schema.optionalKey(
    Schema.Struct({
      cst: digits(3, "ibs_cbs.regular_taxation.cst", "a 3-digit CST").annotate({
        description: "Becomes `gIBSCBS/gTribRegular/CSTReg`."
      }),
      class_code: digits(6, "ibs_cbs.regular_taxation.class_code", "a 6-digit cClassTrib").annotate({
        description: "Becomes `gIBSCBS/gTribRegular/cClassTribReg`."
      })
    })
  ).annotate({
    description: "The regular taxation the operation would have had, required exactly when the class " +
      "demands it (suspension classes): becomes `gIBSCBS/gTribRegular`."
  }),
  deferral: Schema.optionalKey(
    Schema.Struct({
      state_ibs_percent: Percent.annotate({ description: "Becomes `gIBSCBS/gDif/pDifUF`." }),
      municipal_ibs_percent: Percent.annotate({ description: "Becomes `gIBSCBS/gDif/pDifMun`." }),
      cbs_percent: Percent.annotate({ description: "Becomes `gIBSCBS/gDif/pDifCBS`." })
    })
  ).annotate({
    description: "Deferred share of each tax, only for a CST that admits deferral (510, 515): becomes " +
      "`gIBSCBS/gDif`."
  })
}).annotate({
  identifier: "IbsCbs",
  description: "The IBS/CBS group of the tax reform (LC 214/2025): becomes the DPS's `IBSCBS`. Optional in " +
    "2026. `finNFSe` is always 0 (regular note); rates and amounts are computed by the national system and " +
    "never sent. `indZFMALC` (NT 007) is not in any published schema yet and is not accepted."
})
export type IbsCbs = typeof IbsCbs.Type

export interface IbsCbsIssue {
  readonly path: ReadonlyArray<string>
  readonly message: string
}

const issue = (path: ReadonlyArray<string>, message: string): IbsCbsIssue => ({ path: ["ibs_cbs", ...path], message })

/**
 * The rules of the official tables, on a decoded group: what the authority refuses (E0958/E0969 for
 * a class that is not the CST's or not valid for a service, E0964/E0965 for gTribRegular, E0971
 * for a deferral the CST does not admit). Empty when the group is acceptable.
 */
export const ibsCbsIssues = (group: IbsCbs): ReadonlyArray<IbsCbsIssue> => {
  const issues: Array<IbsCbsIssue> = []
  const situation = TAX_SITUATIONS.get(group.cst)
  if (situation === undefined) {
    issues.push(issue(["cst"], `ibs_cbs.cst ${group.cst} is not in the official CST table`))
  }
  const taxClass = NFSE_TAX_CLASSES.get(group.class_code)
  if (!group.class_code.startsWith(group.cst)) {
    issues.push(issue(["class_code"], `ibs_cbs.class_code ${group.class_code} does not belong to CST ${group.cst}`))
  } else if (taxClass === undefined) {
    issues.push(
      issue(
        ["class_code"],
        `ibs_cbs.class_code ${group.class_code} is not a classification the official table allows on an NFS-e`
      )
    )
  }
  if (taxClass !== undefined) {
    if (taxClass.regular && group.regular_taxation === undefined) {
      issues.push(
        issue(["regular_taxation"], `ibs_cbs.regular_taxation is required for class_code ${taxClass.code}`)
      )
    }
    if (!taxClass.regular && group.regular_taxation !== undefined) {
      issues.push(
        issue(["regular_taxation"], `ibs_cbs.regular_taxation is not allowed for class_code ${taxClass.code}`)
      )
    }
  }
  if (group.regular_taxation !== undefined) {
    const regular = group.regular_taxation
    if (!TAX_SITUATIONS.has(regular.cst)) {
      issues.push(
        issue(["regular_taxation", "cst"], `ibs_cbs.regular_taxation.cst ${regular.cst} is not in the CST table`)
      )
    }
    if (!regular.class_code.startsWith(regular.cst)) {
      issues.push(
        issue(
          ["regular_taxation", "class_code"],
          `ibs_cbs.regular_taxation.class_code ${regular.class_code} does not belong to CST ${regular.cst}`
        )
      )
    }
  }
  if (group.deferral !== undefined && situation !== undefined && !situation.deferral) {
    issues.push(issue(["deferral"], `ibs_cbs.deferral is not allowed for CST ${group.cst} (${situation.description})`))
  }
  const destination = group.destination
  if (destination !== undefined && (destination.tax_id === undefined) === (destination.nif === undefined)) {
    issues.push(issue(["destination"], "ibs_cbs.destination needs exactly one of tax_id or nif"))
  }
  return issues
}

// Unknown keys are refused, not stripped: a client sending rates, amounts or indZFMALC would
// otherwise believe they reached the note.
const decodeSchema = Schema.decodeUnknownResult(IbsCbs)
const decodeOptions = { onExcessProperty: "error", errors: "all" } as const

/**
 * Decodes our JSON (the value of `ibs_cbs`) and applies the table rules: the group, or the issues
 * with our field paths. A schema failure is reported as one issue with the schema's message.
 */
export const decodeIbsCbs = (input: unknown): Result.Result<IbsCbs, ReadonlyArray<IbsCbsIssue>> => {
  const decoded = decodeSchema(input, decodeOptions)
  if (Result.isFailure(decoded)) return Result.fail([issue([], `ibs_cbs: ${decoded.failure.message}`)])
  const issues = ibsCbsIssues(decoded.success)
  return issues.length > 0 ? Result.fail(issues) : Result.succeed(decoded.success)
}
