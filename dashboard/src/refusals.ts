/**
 * What the page says when the API refuses something, in the page's language: one text per error
 * `code` of the contract (src/domain/Errors.ts, SPEC §2), and the fields a refusal names (its
 * `issues[].path`) in the page's words. The API's `message` is English; it is shown only on the
 * English page, where it often says more than the code does.
 */
import { type Lang, texts } from "./i18n.js"

export const refusalTexts = texts({
  en: {
    invalid_request: "Some of the data is not valid.",
    api_key_in_url: "An API key appeared in a URL: it is now treated as exposed. Rotate it.",
    missing_credentials: "You are not signed in. Sign in again.",
    invalid_api_key: "The API key is not valid.",
    api_key_revoked: "The API key was revoked.",
    api_key_expired: "The API key was rotated and its grace period has ended.",
    invalid_session: "Your session has ended. Sign in again.",
    invalid_credentials: "The e-mail or password is not correct.",
    invalid_signature: "The signature could not be verified.",
    quota_exceeded: "This month's quota of live documents is used up.",
    tenant_suspended: "Live issuing is suspended for this company's subscription.",
    insufficient_scope: "The API key lacks the scope this needs.",
    forbidden: "Your role in this tenant does not allow this. Ask an owner or admin.",
    email_unverified: "Confirm your e-mail address first: follow the link we sent you.",
    invalid_token: "The link is not valid: it was already used, it expired, or a newer one was sent.",
    api_key_in_browser: "API keys are for backends, not browsers: the key is now treated as exposed. Rotate it.",
    not_found: "It was not found: it may have been removed.",
    method_not_allowed: "The service does not take this request.",
    idempotency_conflict: "The same request is still being processed. Wait a moment.",
    invalid_state: "This is not possible in its current state.",
    conflict: "It clashes with something that already exists.",
    payload_too_large: "What was sent is too large.",
    idempotency_key_reused: "This Idempotency-Key was already used for a different request.",
    credential_required: "Live documents need the company's active A1 certificate.",
    registration_incomplete: "The company's registration lacks fields this needs.",
    invalid_certificate: "The file is not a usable A1 certificate (.pfx/.p12) with its private key.",
    certificate_password_incorrect: "The password does not open this certificate.",
    certificate_expired: "The certificate has expired.",
    certificate_not_yet_valid: "The certificate is not valid yet.",
    certificate_tax_id_mismatch: "The certificate was not issued to the company's CNPJ.",
    rate_limited: "Too many requests. Wait a moment and try again.",
    not_ready: "The service is starting or briefly unavailable. Try again in a moment.",
    service_unavailable: "The service is briefly unavailable. Try again in a moment.",
    internal_error: "Something went wrong on our side. Try again; if it persists, contact support.",
    network_error: "The service cannot be reached. Check your connection and try again.",
    unexpected: "Something unexpected happened. Try again.",
    required: "required"
  },
  pt: {
    invalid_request: "Alguns dados não são válidos.",
    api_key_in_url: "Uma chave de API apareceu em uma URL: ela passa a ser tratada como exposta. Faça a rotação.",
    missing_credentials: "Você não está conectado. Entre novamente.",
    invalid_api_key: "A chave de API não é válida.",
    api_key_revoked: "A chave de API foi revogada.",
    api_key_expired: "A chave de API foi substituída e o período de carência terminou.",
    invalid_session: "Sua sessão terminou. Entre novamente.",
    invalid_credentials: "E-mail ou senha incorretos.",
    invalid_signature: "Não foi possível verificar a assinatura.",
    quota_exceeded: "A cota de documentos de produção deste mês acabou.",
    tenant_suspended: "A emissão em produção está suspensa pela situação da assinatura da empresa.",
    insufficient_scope: "A chave de API não tem o escopo necessário.",
    forbidden: "Seu papel nesta conta não permite esta ação. Peça a um proprietário ou administrador.",
    email_unverified: "Confirme primeiro o seu e-mail: siga o link que enviamos.",
    invalid_token: "O link não é válido: já foi usado, expirou ou um mais novo foi enviado.",
    api_key_in_browser:
      "Chaves de API são para backends, não para navegadores: a chave passa a ser tratada como exposta. Faça a rotação.",
    not_found: "Não encontrado: pode ter sido removido.",
    method_not_allowed: "O serviço não aceita esta requisição.",
    idempotency_conflict: "A mesma requisição ainda está em andamento. Aguarde um instante.",
    invalid_state: "Não é possível na situação atual.",
    conflict: "Conflita com um registro que já existe.",
    payload_too_large: "O conteúdo enviado é grande demais.",
    idempotency_key_reused: "Esta Idempotency-Key já foi usada em outra requisição.",
    credential_required: "Documentos de produção exigem o certificado A1 ativo da empresa.",
    registration_incomplete: "Faltam no cadastro da empresa dados necessários para isto.",
    invalid_certificate: "O arquivo não é um certificado A1 utilizável (.pfx/.p12) com a chave privada.",
    certificate_password_incorrect: "A senha não abre este certificado.",
    certificate_expired: "O certificado está vencido.",
    certificate_not_yet_valid: "O certificado ainda não está válido.",
    certificate_tax_id_mismatch: "O certificado não foi emitido para o CNPJ da empresa.",
    rate_limited: "Muitas requisições. Aguarde um instante e tente de novo.",
    not_ready: "O serviço está iniciando ou indisponível por um instante. Tente de novo em seguida.",
    service_unavailable: "O serviço está indisponível por um instante. Tente de novo em seguida.",
    internal_error: "Algo deu errado do nosso lado. Tente de novo; se persistir, fale com o suporte.",
    network_error: "Não foi possível alcançar o serviço. Verifique a conexão e tente de novo.",
    unexpected: "Algo inesperado aconteceu. Tente de novo.",
    required: "obrigatório"
  }
})

export type RefusalCode = Exclude<keyof typeof refusalTexts.en, "required">

/** Names of the fields the dashboard sends, by their path in the request (most specific first). */
const fieldNames = texts({
  en: {
    "tenant.name": "Company name",
    "tenant.tax_id": "Company tax id (CNPJ or CPF)",
    "taker.tax_id": "Taker's tax id (CNPJ/CPF)",
    tax_id: "Tax id (CNPJ/CPF)",
    email: "E-mail",
    password: "Password",
    name: "Name",
    scopes: "Scopes",
    environment: "Environment",
    grace_days: "Grace period in days",
    role: "Role",
    url: "Endpoint URL",
    events: "Events",
    description: "Description",
    enabled: "Enabled",
    reason_code: "Reason",
    reason: "Explanation",
    pkcs12: "Certificate file",
    file: "Certificate file",
    legal_name: "Legal name",
    trade_name: "Trade name",
    municipal_registration: "Municipal registration (IM)",
    state_registration: "State registration (IE)",
    "address.street": "Street",
    "address.number": "Number",
    "address.complement": "Complement",
    "address.district": "District",
    "address.municipality_code": "Municipality (IBGE code)",
    "address.state": "State (UF)",
    "address.postal_code": "CEP",
    phone: "Phone",
    simples_nacional: "Simples Nacional",
    simples_nacional_apportionment: "How an ME/EPP pays",
    special_regime: "Special regime",
    crt: "CRT",
    registration: "Company registration",
    created_gte: "From",
    created_lt: "Until",
    reference: "Reference"
  },
  pt: {
    "tenant.name": "Nome da empresa",
    "tenant.tax_id": "CNPJ ou CPF da empresa",
    "taker.tax_id": "CNPJ/CPF do tomador",
    tax_id: "CNPJ/CPF",
    email: "E-mail",
    password: "Senha",
    name: "Nome",
    scopes: "Escopos",
    environment: "Ambiente",
    grace_days: "Período de carência em dias",
    role: "Papel",
    url: "URL do endpoint",
    events: "Eventos",
    description: "Descrição",
    enabled: "Ativo",
    reason_code: "Motivo",
    reason: "Justificativa",
    pkcs12: "Arquivo do certificado",
    file: "Arquivo do certificado",
    legal_name: "Razão social",
    trade_name: "Nome fantasia",
    municipal_registration: "Inscrição municipal (IM)",
    state_registration: "Inscrição estadual (IE)",
    "address.street": "Logradouro",
    "address.number": "Número",
    "address.complement": "Complemento",
    "address.district": "Bairro",
    "address.municipality_code": "Município (código IBGE)",
    "address.state": "UF",
    "address.postal_code": "CEP",
    phone: "Telefone",
    simples_nacional: "Simples Nacional",
    simples_nacional_apportionment: "Regime de apuração da ME/EPP",
    special_regime: "Regime especial",
    crt: "CRT",
    registration: "Cadastro da empresa",
    created_gte: "De",
    created_lt: "Até",
    reference: "Referência"
  }
})

type Field = keyof typeof fieldNames.en

/**
 * What is wrong with a field, in Portuguese: the API says it in English only. A field not listed
 * here is said to be invalid, which is true of every issue.
 */
const problemsPt: { readonly [F in Field]?: string } = {
  "tenant.tax_id": "não é um CNPJ ou CPF válido (confira os dígitos verificadores)",
  "taker.tax_id": "não é um CNPJ ou CPF válido (confira os dígitos verificadores)",
  tax_id: "não é um CNPJ ou CPF válido (confira os dígitos verificadores)",
  email: "não é um endereço de e-mail válido",
  password: "use ao menos 12 caracteres",
  grace_days: "informe um número inteiro de 0 a 30",
  url: "use um endereço https público (endereços privados, locais ou sem https são recusados)",
  events: "escolha ao menos um evento da lista",
  reason: "escreva de 15 a 255 caracteres",
  "address.municipality_code": "informe o código IBGE de 7 dígitos de um município",
  "address.state": "informe a sigla da UF do município (ex.: SP)",
  "address.postal_code": "informe os 8 dígitos do CEP",
  phone: "informe DDD e número, só dígitos",
  state_registration: "informe só os dígitos da inscrição",
  municipal_registration: "informe só os dígitos da inscrição"
}

/** What a taken value clashes with, in Portuguese (`409 conflict` names the field it refuses). */
const takenPt: { readonly [F in Field]?: string } = {
  email: "já está cadastrado",
  "tenant.tax_id": "já foi comprovado por outra empresa com o certificado dela",
  reference: "já foi usada em outro documento"
}

const INVALID_PT = "valor inválido"
const TAKEN_PT = "já está em uso"

/** The field a path names: the longest listed ending of its names (list indices left out). */
export const fieldOf = (path: ReadonlyArray<string | number>): Field | undefined => {
  const names = path.filter((segment): segment is string => typeof segment === "string")
  for (let start = 0; start < names.length; start++) {
    const candidate = names.slice(start).join(".")
    if (candidate in fieldNames.en) return candidate as Field
  }
  return undefined
}

const isMissing = (message: string) => /^missing key/i.test(message)

type Issue = { readonly path: ReadonlyArray<string | number>; readonly message: string }

/**
 * What is wrong with an issue's field, in the page's language (the English page keeps the API's
 * words): an invalid value, or (`conflict`) a value already taken.
 */
export const problemText = (issue: Issue, lang: Lang, code = "invalid_request") => {
  if (isMissing(issue.message)) return refusalTexts[lang].required
  if (lang === "en") return issue.message
  const field = fieldOf(issue.path)
  return code === "conflict"
    ? (field && takenPt[field]) ?? TAKEN_PT
    : (field && problemsPt[field]) ?? INVALID_PT
}

/** One issue of a refusal in the page's words: "CNPJ ou CPF da empresa: não é um CNPJ ou CPF válido…". */
export const issueText = (issue: Issue, lang: Lang, code?: string) => {
  const field = fieldOf(issue.path)
  const problem = problemText(issue, lang, code)
  if (field !== undefined) return `${fieldNames[lang][field]}: ${problem}`
  // A field this page does not name: English shows the API's path; Portuguese says only what is wrong.
  return lang === "en" && issue.path.length > 0 ? `${issue.path.join(".")}: ${problem}` : problem
}

export const isRefusalCode = (code: string): code is RefusalCode => code in refusalTexts.en && code !== "required"
