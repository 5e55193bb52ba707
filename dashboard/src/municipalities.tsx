/**
 * Municipality names where the API gives 7-digit IBGE codes. The table is the one the service's
 * DANFSe prints from (src/domain/ibge), so the page and the PDF name a place alike. It is a chunk
 * of its own, fetched only by the screens that show a municipality and then cached by the browser
 * like every content-named asset; until it arrives (or if it cannot), the code is shown.
 */
import { useEffect, useState } from "preact/hooks"

interface Municipality {
  readonly name: string
  readonly state: string
}

export type MunicipalityLookup = (code: string) => Municipality | undefined

let table: Promise<MunicipalityLookup> | undefined

const loadTable = (): Promise<MunicipalityLookup> => {
  table ??= import("../../src/domain/Municipalities.js").then(
    (module) => module.municipalityOf,
    (error: unknown) => {
      // A failed fetch is tried again by the next screen that asks.
      table = undefined
      throw error
    }
  )
  return table
}

/** The look-up by IBGE code once the table has arrived; undefined until then. */
export const useMunicipalities = (): MunicipalityLookup | undefined => {
  const [lookup, setLookup] = useState<{ readonly of: MunicipalityLookup } | undefined>(undefined)
  useEffect(() => {
    let mounted = true
    loadTable().then((of) => mounted && setLookup({ of }), () => undefined)
    return () => {
      mounted = false
    }
  }, [])
  return lookup?.of
}

/** "São Paulo/SP" for an IBGE code; the code (with the state given) while the table does not name it. */
export const placeName = (lookup: MunicipalityLookup | undefined, code: string, state?: string) => {
  const found = lookup?.(code)
  return found !== undefined ? `${found.name}/${found.state}` : state === undefined ? code : `${code}/${state}`
}

/** A municipality by name, its IBGE code beside it for those who work with codes. */
export const MunicipalityName = ({ code }: { readonly code: string }) => {
  const found = useMunicipalities()?.(code)
  return found === undefined
    ? <span class="mono">{code}</span>
    : (
      <>
        {found.name}/{found.state} <span class="hint mono">({code})</span>
      </>
    )
}
