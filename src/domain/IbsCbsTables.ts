/**
 * The official tables of the tax reform (IBS/CBS) a DPS's `IBSCBS` group is checked against, shipped
 * as data: the CST (código de situação tributária) and the cClassTrib (código de classificação
 * tributária) codes the national tables mark as valid for the NFS-e.
 *
 * Source: "Tabela de CST e cClassTrib do IBS e da CBS" of Informe Técnico 2025.002 (RFB / Comitê
 * Gestor do IBS, published with the online table of the Portal da Conformidade Fácil,
 * https://dfe-portal.svrs.rs.gov.br/DFE/ClassificacaoTributaria), in the version that public
 * integrations recorded in November 2025 (see docs/tax-reform.md, "Tables"). A class's reduction
 * percentages (pRedIBS, pRedCBS) are held in hundredths of a percent; a class with rate kind "none"
 * (sem alíquota) carries no IBS/CBS amount. A class marked "regular" demands the regular-taxation
 * group (gTribRegular), as rules E0964/E0965 of Anexo I check.
 *
 * The first three digits of every cClassTrib are its CST; the tables are built that way.
 */

export interface TaxSituation {
  readonly code: string
  readonly description: string
  /** The CST admits deferral (gDif): rule E0971. */
  readonly deferral: boolean
}

export type RateKind = "standard" | "uniform_national" | "uniform_sector" | "fixed" | "none"

export interface TaxClass {
  readonly code: string
  /** pRedIBS in hundredths of a percent (6000 = 60 %). */
  readonly ibsReduction: number
  /** pRedCBS in hundredths of a percent. */
  readonly cbsReduction: number
  readonly rateKind: RateKind
  /** Demands gTribRegular (the regular taxation the operation would have had). */
  readonly regular: boolean
}

const situations: ReadonlyArray<readonly [string, string, boolean]> = [
  ["000", "Tributação integral", false],
  ["010", "Tributação com alíquotas uniformes", false],
  ["011", "Tributação com alíquotas uniformes reduzidas", false],
  ["200", "Alíquota reduzida", false],
  ["220", "Alíquota fixa", false],
  ["221", "Alíquota fixa proporcional", false],
  ["222", "Redução de base de cálculo", false],
  ["400", "Isenção", false],
  ["410", "Imunidade e não incidência", false],
  ["510", "Diferimento", true],
  ["515", "Diferimento com redução de alíquota", true],
  ["550", "Suspensão", false],
  ["620", "Tributação monofásica", false],
  ["800", "Transferência de crédito", false],
  ["810", "Ajuste de IBS na ZFM", false],
  ["811", "Ajustes", false],
  ["820", "Tributação em declaração de regime específico", false],
  ["830", "Exclusão da base de cálculo", false]
]

// [cClassTrib, pRedIBS, pRedCBS, rate kind, demands gTribRegular]
const classes: ReadonlyArray<readonly [string, number, number, RateKind, boolean]> = [
  ["000001", 0, 0, "standard", false],
  ["010001", 0, 0, "uniform_sector", false],
  ["011003", 6000, 6000, "uniform_national", false],
  ["200001", 10000, 10000, "standard", false],
  ["200004", 10000, 10000, "standard", false],
  ["200005", 10000, 10000, "standard", false],
  ["200006", 10000, 10000, "standard", false],
  ["200007", 10000, 10000, "standard", false],
  ["200008", 10000, 10000, "standard", false],
  ["200016", 10000, 10000, "standard", false],
  ["200017", 10000, 10000, "standard", false],
  ["200020", 10000, 10000, "standard", false],
  ["200021", 10000, 10000, "standard", false],
  ["200025", 6000, 10000, "standard", false],
  ["200026", 8000, 8000, "standard", false],
  ["200027", 7000, 7000, "standard", false],
  ["200028", 6000, 6000, "standard", false],
  ["200029", 6000, 6000, "standard", false],
  ["200030", 6000, 6000, "standard", false],
  ["200031", 6000, 6000, "standard", false],
  ["200037", 6000, 6000, "standard", false],
  ["200038", 6000, 6000, "standard", false],
  ["200039", 6000, 6000, "standard", false],
  ["200040", 6000, 6000, "standard", false],
  ["200041", 6000, 6000, "standard", false],
  ["200042", 6000, 6000, "standard", false],
  ["200043", 6000, 6000, "standard", false],
  ["200044", 6000, 6000, "standard", false],
  ["200045", 6000, 6000, "standard", false],
  ["200046", 5000, 5000, "standard", false],
  ["200048", 4000, 4000, "standard", false],
  ["200051", 4000, 4000, "standard", false],
  ["200052", 3000, 3000, "standard", false],
  ["221001", 0, 0, "fixed", false],
  ["400001", 0, 0, "standard", false],
  ["410001", 0, 0, "none", false],
  ["410003", 0, 0, "none", false],
  ["410004", 0, 0, "none", false],
  ["410005", 0, 0, "none", false],
  ["410006", 0, 0, "none", false],
  ["410007", 0, 0, "none", false],
  ["410008", 0, 0, "none", false],
  ["410009", 0, 0, "none", false],
  ["410010", 0, 0, "none", false],
  ["410012", 0, 0, "none", false],
  ["410014", 0, 0, "none", false],
  ["410015", 0, 0, "none", false],
  ["410026", 0, 0, "none", false],
  ["410999", 0, 0, "none", false],
  ["515001", 6000, 6000, "standard", false],
  ["550016", 0, 0, "none", true],
  ["800001", 0, 0, "none", false],
  ["800002", 0, 0, "none", false],
  ["811001", 0, 0, "none", false],
  ["811002", 0, 0, "none", false],
  ["811003", 0, 0, "none", false],
  ["820001", 0, 0, "none", false],
  ["820002", 0, 0, "none", false],
  ["820003", 0, 0, "none", false],
  ["820004", 0, 0, "none", false],
  ["820006", 0, 0, "none", false]
]

/** CST → its row. */
export const TAX_SITUATIONS: ReadonlyMap<string, TaxSituation> = new Map(
  situations.map(([code, description, deferral]) => [code, { code, description, deferral }])
)

/** cClassTrib valid for the NFS-e → its row. */
export const NFSE_TAX_CLASSES: ReadonlyMap<string, TaxClass> = new Map(
  classes.map(([code, ibsReduction, cbsReduction, rateKind, regular]) => [
    code,
    { code, ibsReduction, cbsReduction, rateKind, regular }
  ])
)
