/**
 * Brazilian municipalities by IBGE code: the names the national NFS-e writes beside its codes
 * (xLocEmi, xLocPrestacao, xLocIncid) and the DANFSe prints. The table is data shipped with the
 * service (ibge/municipalities.json, its source in ibge/README.md), bundled into whatever
 * imports this module, so no file has to be found at run time; it is parsed into a map on the
 * first look-up only.
 */
import table from "./ibge/municipalities.json" with { type: "json" }

export interface Municipality {
  readonly name: string
  /** The UF ("SP"). */
  readonly state: string
}

let byCode: ReadonlyMap<string, Municipality> | undefined

const municipalities = (): ReadonlyMap<string, Municipality> => {
  if (byCode === undefined) {
    const map = new Map<string, Municipality>()
    for (const row of table as ReadonlyArray<string>) {
      const [code, state, name] = row.split(";") as [string, string, string]
      map.set(code, { name, state })
    }
    byCode = map
  }
  return byCode
}

/** The municipality of a 7-digit IBGE code, or undefined for a code IBGE does not list. */
export const municipalityOf = (code: string): Municipality | undefined => municipalities().get(code.trim())

/** How many municipalities the table lists. */
export const municipalityCount = (): number => municipalities().size
