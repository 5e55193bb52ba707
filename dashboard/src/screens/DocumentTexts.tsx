/**
 * The documents screens' shared pieces: their words in both languages, the statuses and how each
 * is shown (DocumentList.tsx lists documents, Documents.tsx shows one).
 */
import type { Api } from "../api.js"
import { texts, type Translate } from "../i18n.js"
import { Badge } from "../ui.js"

/** A document of any type; `Document` is a service invoice (NFS-e), `GoodsDocument` an NF-e or NFC-e. */
export type AnyDocument = Awaited<ReturnType<Api["documents"]["get"]>>
export type Document = Extract<AnyDocument, { readonly type: "service_invoice" }>
export type GoodsDocument = Exclude<AnyDocument, Document>
export type Status = AnyDocument["status"]

/** The note's own total: a service invoice's amounts, a goods invoice's vNF. */
export const totalOf = (document: AnyDocument): number =>
  document.type === "service_invoice" ? document.amounts.total : document.totals.total

/** Who the note is for: a service invoice's taker, a goods invoice's recipient; undefined: nobody named. */
export const counterpartOf = (document: AnyDocument): string | undefined =>
  document.type === "service_invoice" ? document.taker?.name : document.recipient?.name

/** The list's status filter offers these, in the life cycle's order. */
export const STATUSES = [
  "queued",
  "submitting",
  "contingency",
  "authorized",
  "rejected",
  "failed",
  "cancel_requested",
  "cancelled",
  "cancellation_in_analysis",
  "substituted"
] as const satisfies ReadonlyArray<Status>
// A status the contract adds and the filter lacks stops this build (the page could not filter by it).
const everyStatusListed: [Exclude<Status, typeof STATUSES[number]>] extends [never] ? true : never = true
void everyStatusListed
/** Statuses the background work still moves on from; the detail polls while it shows one. */
export const IN_PROGRESS: ReadonlySet<Status> = new Set([
  "queued",
  "submitting",
  "contingency",
  "cancel_requested",
  "cancellation_in_analysis"
])
/** The note exists at the authority: its files can be downloaded. */
export const WITH_FILES: ReadonlySet<Status> = new Set([
  "contingency",
  "authorized",
  "cancel_requested",
  "cancelled",
  "cancellation_in_analysis",
  "substituted"
])
export const PAGE_SIZE = 25
export const POLL_MS = 3000

export const text = texts({
  en: {
    title: "Documents",
    filters: "Filters",
    status: "Status",
    anyStatus: "All statuses",
    environment: "Environment",
    anyEnvironment: "Live and test",
    live: "Live",
    test: "Test",
    createdFrom: "Created from",
    createdTo: "Created until (inclusive)",
    reference: "Reference",
    apply: "Apply filters",
    clear: "Clear filters",
    badRange: "The end date must not be before the start date.",
    number: "Number / series",
    numberSeries: "No. {number} · series {series}",
    nfseColumn: "NFS-e no.",
    type: "Type",
    anyType: "All types",
    type_service_invoice: "NFS-e (services)",
    type_product_invoice: "NF-e (goods)",
    type_consumer_invoice: "NFC-e (consumer)",
    recipient: "Recipient",
    noRecipient: "Consumer not identified.",
    items: "Items",
    itemCode: "Code",
    itemDescription: "Description",
    ncm: "NCM",
    cfop: "CFOP",
    quantity: "Quantity",
    unitPrice: "Unit price",
    itemValue: "Value",
    totals: "Totals",
    totalProducts: "Products",
    totalDiscount: "Discount",
    totalFreight: "Freight",
    totalIcms: "ICMS",
    totalIpi: "IPI",
    payments: "Payments",
    search: "Search documents",
    searchBy: "Search by",
    searchTaker: "Taker: CNPJ/CPF or name",
    searchNfse: "NFS-e number",
    searchDps: "DPS number",
    searchDigits: "Type the number's digits only.",
    documentId: "Document id",
    copyId: "Copy document id",
    copyAccessKey: "Copy access key",
    taker: "Taker",
    total: "Total",
    created: "Created",
    list: "Documents, newest first",
    none: "No documents yet.",
    noneHint:
      "Documents are issued by your company's backend with an API key, not from this dashboard. Create a test key, then send a document to the API; it appears here within seconds.",
    noneExample: "For example, with a test key (replace etd_test_… with your key's token):",
    createKey: "Create an API key",
    noMatch: "No documents match these filters.",
    status_queued: "queued",
    status_submitting: "submitting",
    status_contingency: "offline (contingency)",
    status_authorized: "authorized",
    status_rejected: "rejected",
    status_failed: "failed",
    status_cancel_requested: "cancellation requested",
    status_cancelled: "cancelled",
    status_cancellation_in_analysis: "cancellation in analysis",
    status_substituted: "substituted",
    substitution: "Substitution",
    substitutes: "Replaces",
    substitutedBy: "Replaced by",
    substitutionReason: "Reason",
    substitutionHint: "A note is replaced by a corrected one issued with an API key " +
      "(POST /v1/documents/{id}/substitute); the dashboard shows both links.",
    back: "All documents",
    detailTitle: "Document no. {number}, series {series}",
    refresh: "Refresh",
    refreshing: "Refreshing…",
    polling: "Still being processed: this page checks again every few seconds.",
    statusNow: "The document is now {status}.",
    summary: "Summary",
    issueDate: "Issue date",
    noReference: "none",
    takerName: "Name",
    taxId: "Tax id (CNPJ/CPF)",
    email: "Email",
    address: "Address",
    service: "Service",
    serviceCode: "National service code",
    nbsCode: "NBS code",
    description: "Description",
    municipality: "Municipality",
    notes: "Notes",
    noTaker: "Unidentified consumer",
    intermediary: "Intermediary",
    authority: "Tax authority",
    accessKey: "Access key",
    nfseNumber: "NFS-e number",
    protocol: "Protocol",
    authorizedAt: "Authorized at",
    notAuthorized: "The authority has not authorized this document.",
    contingency: "Issued offline (contingency)",
    contingencySince: "Offline since",
    contingencyTransmitBy: "Transmit by",
    contingencyPending:
      "The state authority could not be reached, so this NFC-e was issued offline: its XML and DANFE " +
      "are valid for the consumer now. The service transmits it until the authority answers.",
    contingencyTransmitted: "This NFC-e was issued offline and transmitted afterwards.",
    rejection: "Rejection",
    rejectionHint:
      "The tax authority refused this document. Fix what it says and issue a new document from your backend.",
    code: "Code",
    message: "Message",
    processing: "Processing",
    attempts: "Attempts",
    lastError: "Last error",
    noError: "none",
    updated: "Updated",
    files: "Files",
    downloadXml: "Download XML",
    downloadPdf: "Download PDF (DANFSe)",
    downloadDanfe: "Download PDF (DANFE)",
    noFiles: "The XML and the PDF become available once the authority authorizes the document.",
    downloaded: "{name} downloaded.",
    cancelRequested: "Cancellation requested. The authority's answer appears here; refresh to check.",
    analysisRequested:
      "Analysis requested. The municipality's decision appears here once the authority has it; refresh to check.",
    substitutionKey: "Access key of the replaced note",
    substitution_simples_nacional_exclusion: "the provider left the Simples Nacional",
    substitution_simples_nacional_inclusion: "the provider entered the Simples Nacional",
    substitution_retroactive_exemption_granted: "immunity or exemption granted retroactively",
    substitution_retroactive_exemption_removed: "immunity or exemption removed retroactively",
    substitution_refused_by_taker: "refused by the taker",
    substitution_other: "other",
    municipalRegistration: "Municipal registration",
    phone: "Phone"
  },
  pt: {
    title: "Documentos",
    filters: "Filtros",
    status: "Situação",
    anyStatus: "Todas as situações",
    environment: "Ambiente",
    anyEnvironment: "Produção e teste",
    live: "Produção",
    test: "Teste",
    createdFrom: "Criados a partir de",
    createdTo: "Criados até (inclusive)",
    reference: "Referência",
    apply: "Aplicar filtros",
    clear: "Limpar filtros",
    badRange: "A data final não pode ser anterior à data inicial.",
    number: "Número / série",
    numberSeries: "Nº {number} · série {series}",
    nfseColumn: "Nº da NFS-e",
    type: "Tipo",
    anyType: "Todos os tipos",
    type_service_invoice: "NFS-e (serviços)",
    type_product_invoice: "NF-e (mercadorias)",
    type_consumer_invoice: "NFC-e (consumidor)",
    recipient: "Destinatário",
    noRecipient: "Consumidor não identificado.",
    items: "Itens",
    itemCode: "Código",
    itemDescription: "Descrição",
    ncm: "NCM",
    cfop: "CFOP",
    quantity: "Quantidade",
    unitPrice: "Valor unitário",
    itemValue: "Valor",
    totals: "Totais",
    totalProducts: "Produtos",
    totalDiscount: "Desconto",
    totalFreight: "Frete",
    totalIcms: "ICMS",
    totalIpi: "IPI",
    payments: "Pagamentos",
    search: "Buscar documentos",
    searchBy: "Buscar por",
    searchTaker: "Tomador: CNPJ/CPF ou nome",
    searchNfse: "Número da NFS-e",
    searchDps: "Número da DPS",
    searchDigits: "Digite apenas os algarismos do número.",
    documentId: "Id do documento",
    copyId: "Copiar id do documento",
    copyAccessKey: "Copiar chave de acesso",
    taker: "Tomador",
    total: "Total",
    created: "Criado em",
    list: "Documentos, dos mais recentes aos mais antigos",
    none: "Nenhum documento ainda.",
    noneHint:
      "Os documentos são emitidos pelo backend da sua empresa com uma chave de API, não por este painel. Crie uma chave de teste e envie um documento para a API; ele aparece aqui em segundos.",
    noneExample: "Por exemplo, com uma chave de teste (troque etd_test_… pelo token da sua chave):",
    createKey: "Criar uma chave de API",
    noMatch: "Nenhum documento corresponde a estes filtros.",
    status_queued: "na fila",
    status_submitting: "em envio",
    status_contingency: "em contingência",
    status_authorized: "autorizado",
    status_rejected: "rejeitado",
    status_failed: "com falha",
    status_cancel_requested: "cancelamento solicitado",
    status_cancelled: "cancelado",
    status_cancellation_in_analysis: "cancelamento em análise",
    status_substituted: "substituído",
    substitution: "Substituição",
    substitutes: "Substitui",
    substitutedBy: "Substituído por",
    substitutionReason: "Motivo",
    substitutionHint: "Uma nota é substituída por outra corrigida, emitida com uma chave de API " +
      "(POST /v1/documents/{id}/substitute); o painel mostra os dois vínculos.",
    back: "Todos os documentos",
    detailTitle: "Documento nº {number}, série {series}",
    refresh: "Atualizar",
    refreshing: "Atualizando…",
    polling: "Ainda em processamento: esta página verifica de novo a cada poucos segundos.",
    statusNow: "O documento agora está: {status}.",
    summary: "Resumo",
    issueDate: "Data de competência",
    noReference: "nenhuma",
    takerName: "Nome",
    taxId: "CNPJ/CPF",
    email: "E-mail",
    address: "Endereço",
    service: "Serviço",
    serviceCode: "Código de tributação nacional",
    nbsCode: "Código NBS",
    description: "Descrição",
    municipality: "Município",
    notes: "Observações",
    noTaker: "Consumidor não identificado",
    intermediary: "Intermediário",
    authority: "Autoridade tributária",
    accessKey: "Chave de acesso",
    nfseNumber: "Número da NFS-e",
    protocol: "Protocolo",
    authorizedAt: "Autorizado em",
    notAuthorized: "A autoridade não autorizou este documento.",
    contingency: "Emitida em contingência off-line",
    contingencySince: "Em contingência desde",
    contingencyTransmitBy: "Transmitir até",
    contingencyPending: "A SEFAZ autorizadora não respondeu, então esta NFC-e foi emitida off-line: o XML e o DANFE " +
      "já valem para o consumidor. O serviço a transmite até a SEFAZ responder.",
    contingencyTransmitted: "Esta NFC-e foi emitida em contingência e transmitida depois.",
    rejection: "Rejeição",
    rejectionHint:
      "A autoridade tributária recusou este documento. Corrija o que ela indica e emita um novo documento pelo seu backend.",
    code: "Código",
    message: "Mensagem",
    processing: "Processamento",
    attempts: "Tentativas",
    lastError: "Último erro",
    noError: "nenhum",
    updated: "Atualizado em",
    files: "Arquivos",
    downloadXml: "Baixar XML",
    downloadPdf: "Baixar PDF (DANFSe)",
    downloadDanfe: "Baixar PDF (DANFE)",
    noFiles: "O XML e o PDF ficam disponíveis quando a autoridade autoriza o documento.",
    downloaded: "{name} baixado.",
    cancelRequested: "Cancelamento solicitado. A resposta da autoridade aparece aqui; atualize para conferir.",
    analysisRequested:
      "Análise solicitada. A decisão do município aparece aqui quando a autoridade a tiver; atualize para conferir.",
    substitutionKey: "Chave de acesso da nota substituída",
    substitution_simples_nacional_exclusion: "desenquadramento do Simples Nacional",
    substitution_simples_nacional_inclusion: "enquadramento no Simples Nacional",
    substitution_retroactive_exemption_granted: "concessão retroativa de imunidade ou isenção",
    substitution_retroactive_exemption_removed: "retirada retroativa de imunidade ou isenção",
    substitution_refused_by_taker: "rejeição pelo tomador",
    substitution_other: "outros",
    municipalRegistration: "Inscrição municipal",
    phone: "Telefone"
  }
})

export type Texts = Translate<keyof typeof text.en>
const statusTone = (status: Status) => {
  switch (status) {
    case "authorized":
      return "ok"
    case "rejected":
    case "failed":
      return "bad"
    case "cancel_requested":
    case "cancellation_in_analysis":
      return "warn"
    case "cancelled":
    case "substituted":
      return "muted"
    case "queued":
    case "submitting":
      return "info"
    case "contingency":
      return "warn"
  }
}

export const StatusBadge = ({ status, t }: { readonly status: Status; readonly t: Texts }) => (
  <Badge tone={statusTone(status)}>{t(`status_${status}`)}</Badge>
)
