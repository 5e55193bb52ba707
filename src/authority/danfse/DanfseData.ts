/**
 * What the DANFSe prints: the NFS-e's data (`DanfseData`), and whether the note is cancelled and
 * in which environment it was issued (`DanfseOptions`). `DanfseData` is structurally the
 * `ParsedNfse` that sefin/Nfse.ts reads from the XML, reduced to the fields drawn, so a
 * `ParsedNfse` can be passed as it is.
 */
export interface DanfseAddress {
  readonly street?: string | undefined
  readonly number?: string | undefined
  readonly complement?: string | undefined
  readonly district?: string | undefined
  readonly municipalityCode?: string | undefined
  readonly municipalityName?: string | undefined
  readonly state?: string | undefined
  readonly postalCode?: string | undefined
}

export interface DanfseData {
  readonly accessKey: string
  readonly nfseNumber: string | number
  /** dhProc as written in the XML, "YYYY-MM-DDThh:mm:ss[.fff]±hh:mm". */
  readonly processedAt: string
  readonly issuer: {
    readonly taxId: string
    readonly name?: string | undefined
    readonly municipalityName?: string | undefined
    readonly address?: DanfseAddress | undefined
    readonly email?: string | undefined
    readonly phone?: string | undefined
  }
  readonly taker?: {
    readonly taxId?: string | undefined
    readonly name?: string | undefined
    readonly email?: string | undefined
    readonly address?: DanfseAddress | undefined
  } | undefined
  readonly service: {
    readonly code: string
    readonly description: string
    readonly nbsCode?: string | undefined
    readonly municipalityCode: string
    readonly municipalityName?: string | undefined
  }
  /** Decimal strings as in the XML ("1500.00"; rate "2.00"). */
  readonly amounts: {
    readonly services: string
    readonly deductions?: string | undefined
    readonly base?: string | undefined
    readonly issRate?: string | undefined
    readonly issAmount?: string | undefined
    readonly net?: string | undefined
  }
  readonly dps: {
    readonly id: string
    readonly series: string
    readonly number: string | number
    readonly emittedAt: string
    readonly competence: string
  }
  readonly notes?: string | undefined
}

export interface DanfseOptions {
  readonly cancelled: boolean
  /** tpAmb: 1 production, 2 homologation ("produção restrita"), which prints "SEM VALIDADE JURÍDICA". */
  readonly environment: 1 | 2
}
