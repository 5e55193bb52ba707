/**
 * The DPS's parties other than the provider (`toma`, `interm`, both `TCInfoPessoa`): identified by
 * CPF/CNPJ, by foreign tax id (`NIF`) or the reason there is none (`cNaoNIF`), with an address in
 * Brazil (`endNac`) or abroad (`endExt`), in the schema's order.
 */
import type { Party } from "../../domain/TaxContent.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { leaf, node, singleLine } from "../xml/XmlText.js"
import { isCpf } from "./DpsId.js"

/** `cNaoNIF`: 0 not informed, 1 waived, 2 not required. */
const noNifCode: Record<NonNullable<Party["no_nif_reason"]>, string> = {
  not_informed: "0",
  waived: "1",
  not_required: "2"
}

const identification = (party: Party): string => {
  if (party.tax_id !== undefined) {
    const taxId = normalizeTaxId(party.tax_id)
    return leaf(isCpf(taxId) ? "CPF" : "CNPJ", taxId)
  }
  if (party.nif !== undefined) return leaf("NIF", singleLine(party.nif))
  return leaf("cNaoNIF", noNifCode[party.no_nif_reason ?? "not_informed"])
}

const optionalLeaf = (name: string, value: string | undefined): string =>
  value === undefined || singleLine(value) === "" ? "" : leaf(name, singleLine(value))

const address = (party: Party): string => {
  const national = party.address
  const foreign = party.foreign_address
  if (national !== undefined) {
    return node(
      "end",
      node("endNac", leaf("cMun", national.municipality_code), leaf("CEP", national.postal_code)),
      leaf("xLgr", singleLine(national.street)),
      leaf("nro", singleLine(national.number)),
      optionalLeaf("xCpl", national.complement),
      leaf("xBairro", singleLine(national.district))
    )
  }
  if (foreign !== undefined) {
    return node(
      "end",
      node(
        "endExt",
        leaf("cPais", foreign.country),
        leaf("cEndPost", singleLine(foreign.postal_code)),
        leaf("xCidade", singleLine(foreign.city)),
        leaf("xEstProvReg", singleLine(foreign.region))
      ),
      leaf("xLgr", singleLine(foreign.street)),
      leaf("nro", singleLine(foreign.number)),
      optionalLeaf("xCpl", foreign.complement),
      leaf("xBairro", singleLine(foreign.district))
    )
  }
  return ""
}

/** `<toma>` or `<interm>` for a party; nothing for an absent one. */
export const partyElement = (name: "toma" | "interm", party: Party | null | undefined): string =>
  party === null || party === undefined ? "" : node(
    name,
    identification(party),
    optionalLeaf("IM", party.municipal_registration),
    leaf("xNome", singleLine(party.name)),
    address(party),
    optionalLeaf("fone", party.phone),
    optionalLeaf("email", party.email)
  )
