/**
 * The words the DANFSe prints for the XML's codes, from the descriptions of the v1.01 simple types
 * (tiposSimples_v1.01.xsd), shortened to fit a field. A code the table does not know is printed
 * as it is: a newer schema's value still shows, never a wrong word.
 */
import { EMPTY, present } from "./Format.js"

const table = (entries: Record<string, string>) => (code: string | undefined): string =>
  !present(code) ? EMPTY : entries[code] ?? code

/** tpDedRed of a deduction document. */
export const deductionKind = table({
  "1": "Alimentação e bebidas/frigobar",
  "2": "Materiais",
  "5": "Repasse consorciado",
  "6": "Repasse plano de saúde",
  "7": "Serviços",
  "8": "Subempreitada de mão de obra",
  "99": "Outras deduções"
})

/** cStat of the NFS-e. */
export const noteStatus = table({
  "100": "NFS-e gerada",
  "101": "NFS-e de substituição gerada",
  "102": "NFS-e de decisão judicial",
  "103": "NFS-e avulsa",
  "107": "NFS-e MEI"
})

/** tpEmit of the DPS. */
export const emitter = table({ "1": "Prestador", "2": "Tomador", "3": "Intermediário" })

/** ambGer of the NFS-e. */
export const generator = table({ "1": "Prefeitura", "2": "Sistema Nacional da NFS-e" })

/** tribISSQN. */
export const issTaxation = table({
  "1": "Operação tributável",
  "2": "Imunidade",
  "3": "Exportação de serviço",
  "4": "Não incidência"
})

/** tpRetISSQN. */
export const issRetention = table({
  "1": "Não retido",
  "2": "Retido pelo tomador",
  "3": "Retido pelo intermediário"
})

/** opSimpNac. */
export const simplesNacional = table({
  "1": "Não optante",
  "2": "Optante - Microempreendedor Individual (MEI)",
  "3": "Optante - Microempresa ou Empresa de Pequeno Porte (ME/EPP)"
})

/** regApTribSN. */
export const simplesApuration = table({
  "1": "Tributos federais e municipal pelo SN",
  "2": "Federais pelo SN e ISSQN por fora do SN",
  "3": "Federais e municipal por fora do SN"
})

/** regEspTrib. */
export const specialRegime = table({
  "0": "Nenhum",
  "1": "Ato cooperado (cooperativa)",
  "2": "Estimativa",
  "3": "Microempresa municipal",
  "4": "Notário ou registrador",
  "5": "Profissional autônomo",
  "6": "Sociedade de profissionais"
})

/** tpImunidade. */
export const immunity = table({
  "0": "Imunidade (tipo não informado)",
  "1": "Patrimônio, renda ou serviços, uns dos outros (CF88, art. 150, VI, a)",
  "2": "Templos de qualquer culto (CF88, art. 150, VI, b)",
  "3": "Partidos, sindicatos, educação e assistência social (CF88, art. 150, VI, c)",
  "4": "Livros, jornais, periódicos e papel (CF88, art. 150, VI, d)",
  "5": "Fonogramas e videofonogramas musicais (CF88, art. 150, VI, e)"
})

/** tpSusp. */
export const suspension = table({
  "1": "Suspensa por decisão judicial",
  "2": "Suspensa por processo administrativo"
})

/** tpRetPisCofins, the ten codes of the package of 27/07/2026 (NT 007). */
export const pisCofinsRetention = table({
  "0": "PIS/COFINS/CSLL não retidos",
  "1": "PIS/COFINS retidos",
  "2": "PIS/COFINS não retidos",
  "3": "PIS/COFINS/CSLL retidos",
  "4": "PIS/COFINS retidos, CSLL não retido",
  "5": "PIS retido, COFINS/CSLL não retidos",
  "6": "COFINS retido, PIS/CSLL não retidos",
  "7": "PIS não retido, COFINS/CSLL retidos",
  "8": "PIS/COFINS não retidos, CSLL retido",
  "9": "COFINS não retido, PIS/CSLL retidos"
})

/** CST of PIS/COFINS. */
export const pisCofinsCst = table({
  "00": "00 - Nenhum",
  "01": "01 - Tributável com alíquota básica",
  "02": "02 - Tributável com alíquota diferenciada",
  "03": "03 - Tributável por unidade de medida",
  "04": "04 - Monofásica, revenda a alíquota zero",
  "05": "05 - Substituição tributária",
  "06": "06 - Alíquota zero",
  "07": "07 - Isenta da contribuição",
  "08": "08 - Sem incidência da contribuição",
  "09": "09 - Suspensão da contribuição",
  "49": "49 - Outras operações de saída",
  "50": "50 - Crédito: receita tributada no mercado interno",
  "51": "51 - Crédito: receita não tributada no mercado interno",
  "52": "52 - Crédito: receita de exportação",
  "53": "53 - Crédito: receitas tributadas e não tributadas no mercado interno",
  "54": "54 - Crédito: receitas tributadas no mercado interno e de exportação",
  "55": "55 - Crédito: receitas não tributadas no mercado interno e de exportação",
  "56": "56 - Crédito: receitas tributadas e não tributadas no mercado interno e de exportação",
  "60": "60 - Crédito presumido: receita tributada no mercado interno",
  "61": "61 - Crédito presumido: receita não tributada no mercado interno",
  "62": "62 - Crédito presumido: receita de exportação",
  "63": "63 - Crédito presumido: receitas tributadas e não tributadas no mercado interno",
  "64": "64 - Crédito presumido: receitas tributadas no mercado interno e de exportação",
  "65": "65 - Crédito presumido: receitas não tributadas no mercado interno e de exportação",
  "66": "66 - Crédito presumido: receitas tributadas e não tributadas no mercado interno e de exportação",
  "67": "67 - Crédito presumido: outras operações",
  "70": "70 - Aquisição sem direito a crédito",
  "71": "71 - Aquisição com isenção",
  "72": "72 - Aquisição com suspensão",
  "73": "73 - Aquisição a alíquota zero",
  "74": "74 - Aquisição sem incidência da contribuição",
  "75": "75 - Aquisição por substituição tributária",
  "98": "98 - Outras operações de entrada",
  "99": "99 - Outras operações"
})

/** cMotivo of subst. */
export const substitutionReason = table({
  "01": "Desenquadramento do Simples Nacional",
  "02": "Enquadramento no Simples Nacional",
  "03": "Inclusão retroativa de imunidade/isenção",
  "04": "Exclusão retroativa de imunidade/isenção",
  "05": "Rejeição pelo tomador ou intermediário",
  "99": "Outros"
})

/** mdPrestacao. */
export const tradeMode = table({
  "0": "Desconhecido",
  "1": "Transfronteiriço",
  "2": "Consumo no Brasil",
  "3": "Presença comercial no exterior",
  "4": "Movimento temporário de pessoas físicas"
})

/** vincPrest. */
export const tradeLink = table({
  "0": "Sem vínculo",
  "1": "Controlada",
  "2": "Controladora",
  "3": "Coligada",
  "4": "Matriz",
  "5": "Filial ou sucursal",
  "6": "Outro vínculo",
  "9": "Desconhecido"
})

/** movTempBens. */
export const temporaryGoods = table({
  "0": "Desconhecido",
  "1": "Não",
  "2": "Vinculada - declaração de importação",
  "3": "Vinculada - declaração de exportação"
})

/** mdic. */
export const mdic = table({ "0": "Não enviar ao MDIC", "1": "Enviar ao MDIC" })

/** cNaoNIF. */
export const noTaxIdReason = table({
  "0": "NIF não informado",
  "1": "Dispensado do NIF",
  "2": "NIF não exigido"
})

/** indDest. */
export const destination = table({
  "0": "O próprio tomador",
  "1": "Outra pessoa ou estabelecimento"
})

/** indFinal. */
export const yesNo = table({ "0": "Não", "1": "Sim" })

/** indTotTrib 0: no estimate informed (Decreto 8.264/2014). */
export const totalTaxesIndicator = table({ "0": "Não informado (Decreto 8.264/2014)" })

/** tpBM of the NFS-e: the kind of municipal benefit applied. */
export const benefitKind = table({
  "1": "Isenção",
  "2": "Redução da BC em %",
  "3": "Redução da BC em R$",
  "4": "Alíquota diferenciada"
})
