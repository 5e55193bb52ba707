/**
 * What the DANFSe prints: the NFS-e's data (`DanfseData`, read from the authorized XML by
 * NfseReader.ts) and how the note stands (`DanfseOptions`). Every value is the XML's own text
 * ("1500.00", rate "2.00", codes as written): how it is written on the page is Format.ts's and
 * Labels.ts's. Only `accessKey`, the numbers, the dates, the issuer's tax id, the service and its
 * value are always there; everything else is printed as "-" when the note does not carry it.
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
  /** endExt: a foreign address's country (ISO code), postal code, city and state/province/region. */
  readonly countryCode?: string | undefined
  readonly foreignPostalCode?: string | undefined
  readonly city?: string | undefined
  readonly region?: string | undefined
}

/** A person of the note: the issuer (emit + prest), the taker (toma) or the intermediary (interm). */
export interface DanfseParty {
  /** CNPJ, CPF or a foreign NIF, as written. */
  readonly taxId?: string | undefined
  /** cNaoNIF: why a foreigner has no NIF (0, 1, 2). */
  readonly noTaxIdReason?: string | undefined
  readonly caepf?: string | undefined
  /** IM, without the padding real notes carry. */
  readonly municipalRegistration?: string | undefined
  readonly name?: string | undefined
  readonly tradeName?: string | undefined
  readonly email?: string | undefined
  readonly phone?: string | undefined
  readonly address?: DanfseAddress | undefined
}

export interface DanfseIssuer extends DanfseParty {
  readonly taxId: string
  /** xLocEmi. */
  readonly municipalityName?: string | undefined
  /** regTrib: opSimpNac, regApTribSN, regEspTrib codes. */
  readonly simplesNacional?: string | undefined
  readonly simplesApuration?: string | undefined
  readonly specialRegime?: string | undefined
}

export interface DanfseForeignTrade {
  readonly mode?: string | undefined
  readonly link?: string | undefined
  readonly currency?: string | undefined
  readonly amountInCurrency?: string | undefined
  readonly providerSupport?: string | undefined
  readonly takerSupport?: string | undefined
  readonly temporaryGoods?: string | undefined
  readonly importDeclaration?: string | undefined
  readonly exportRegistration?: string | undefined
  readonly mdic?: string | undefined
}

export interface DanfseService {
  /** cTribNac and its description (xTribNac). */
  readonly code: string
  readonly codeDescription?: string | undefined
  readonly description: string
  /** cTribMun and xTribMun. */
  readonly municipalCode?: string | undefined
  readonly municipalCodeDescription?: string | undefined
  readonly nbsCode?: string | undefined
  readonly nbsDescription?: string | undefined
  readonly internalCode?: string | undefined
  /** cLocPrestacao (with xLocPrestacao), or cPaisPrestacao for a service rendered abroad. */
  readonly municipalityCode?: string | undefined
  readonly municipalityName?: string | undefined
  readonly countryCode?: string | undefined
  readonly foreignTrade?: DanfseForeignTrade | undefined
}

/** tribMun of the DPS with the NFS-e's place of incidence. */
export interface DanfseMunicipalTax {
  readonly taxation?: string | undefined
  readonly resultCountry?: string | undefined
  readonly immunity?: string | undefined
  readonly suspension?: string | undefined
  readonly suspensionProcess?: string | undefined
  readonly benefitNumber?: string | undefined
  /** tpBM of the NFS-e. */
  readonly benefitKind?: string | undefined
  readonly benefitReductionAmount?: string | undefined
  readonly benefitReductionRate?: string | undefined
  readonly retention?: string | undefined
  /** pAliq as the DPS declared it. */
  readonly declaredRate?: string | undefined
  readonly incidenceCode?: string | undefined
  readonly incidenceName?: string | undefined
}

/** tribFed of the DPS. */
export interface DanfseFederalTax {
  readonly pisCofinsCst?: string | undefined
  readonly pisCofinsBase?: string | undefined
  readonly pisRate?: string | undefined
  readonly cofinsRate?: string | undefined
  readonly pis?: string | undefined
  readonly cofins?: string | undefined
  readonly pisCofinsRetention?: string | undefined
  readonly socialSecurity?: string | undefined
  readonly incomeTax?: string | undefined
  readonly csll?: string | undefined
}

/** totTrib of the DPS: amounts, percentages, the Simples percentage or only the indicator. */
export interface DanfseApproximateTaxes {
  readonly federal?: string | undefined
  readonly state?: string | undefined
  readonly municipal?: string | undefined
  readonly federalRate?: string | undefined
  readonly stateRate?: string | undefined
  readonly municipalRate?: string | undefined
  readonly simplesRate?: string | undefined
  readonly indicator?: string | undefined
}

/** IBSCBS of the DPS (what was declared) and of the NFS-e (what the system computed). */
export interface DanfseIbsCbs {
  readonly purpose?: string | undefined
  readonly finalConsumer?: string | undefined
  readonly operationIndicator?: string | undefined
  readonly operationType?: string | undefined
  readonly destinationIndicator?: string | undefined
  readonly cst?: string | undefined
  readonly classification?: string | undefined
  readonly incidenceCode?: string | undefined
  readonly incidenceName?: string | undefined
  readonly reduction?: string | undefined
  readonly base?: string | undefined
  readonly ibsStateRate?: string | undefined
  readonly ibsStateEffectiveRate?: string | undefined
  readonly ibsMunicipalRate?: string | undefined
  readonly ibsMunicipalEffectiveRate?: string | undefined
  readonly cbsRate?: string | undefined
  readonly cbsEffectiveRate?: string | undefined
  readonly ibsState?: string | undefined
  readonly ibsMunicipal?: string | undefined
  readonly ibsTotal?: string | undefined
  readonly cbs?: string | undefined
  readonly noteTotal?: string | undefined
}

export interface DanfseAmounts {
  readonly services: string
  readonly received?: string | undefined
  readonly unconditionalDiscount?: string | undefined
  readonly conditionalDiscount?: string | undefined
  /** vCalcDR of the NFS-e, else the DPS's vDR; pDR when the deduction is a percentage. */
  readonly deductions?: string | undefined
  readonly deductionRate?: string | undefined
  readonly benefitCalculation?: string | undefined
  readonly base?: string | undefined
  readonly issRate?: string | undefined
  readonly issAmount?: string | undefined
  /** vTotalRet: everything withheld from the provider. */
  readonly totalWithheld?: string | undefined
  readonly net?: string | undefined
}

export interface DanfseData {
  readonly accessKey: string
  readonly nfseNumber: string | number
  /** nDFSe. */
  readonly dfseNumber?: string | undefined
  /** dhProc as written in the XML, "YYYY-MM-DDThh:mm:ss[.fff]±hh:mm". */
  readonly processedAt: string
  /** cStat (100 generated, 101 replacing another, …), tpEmit of the DPS (who emitted it) and ambGer. */
  readonly status?: string | undefined
  readonly emitter?: string | undefined
  readonly generator?: string | undefined
  readonly issuer: DanfseIssuer
  readonly taker?: DanfseParty | undefined
  readonly intermediary?: DanfseParty | undefined
  /** dest of the DPS's IBSCBS group: who the service is for, when not the taker. */
  readonly recipient?: DanfseParty | undefined
  readonly service: DanfseService
  readonly municipalTax?: DanfseMunicipalTax | undefined
  readonly federalTax?: DanfseFederalTax | undefined
  readonly approximateTaxes?: DanfseApproximateTaxes | undefined
  readonly ibsCbs?: DanfseIbsCbs | undefined
  readonly amounts: DanfseAmounts
  readonly dps: {
    readonly id: string
    readonly series: string
    readonly number: string | number
    readonly emittedAt: string
    readonly competence: string
  }
  /** subst: the note this one replaces, with the reason's code and text. */
  readonly replaces?: {
    readonly accessKey: string
    readonly reasonCode?: string | undefined
    readonly reason?: string | undefined
  } | undefined
  /** The DPS's xInfComp and the NFS-e's xOutInf, with the order and document references, as one text. */
  readonly notes?: string | undefined
}

export interface DanfseOptions {
  readonly cancelled: boolean
  /** Replaced by another note (its substitution event registered). */
  readonly substituted?: boolean | undefined
  /** tpAmb: 1 production, 2 homologation ("produção restrita"), which prints "SEM VALIDADE JURÍDICA". */
  readonly environment: 1 | 2
}
