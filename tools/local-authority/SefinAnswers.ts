/**
 * The bodies the local authority answers with, shaped as the real SEFIN Nacional answers rather than
 * as its Swagger says (../shared/reference/nfse-nacional/README.md, "Real traffic differs"; bodies in
 * samples/real-responses.json):
 *
 * - `POST /nfse` refusals: `erros: [{Codigo, Descricao, Complemento?}]`, PascalCase, with `idDPS`
 *   at the top once the DPS could be read;
 * - queries (`GET /nfse/{chave}`, `GET /dps/{id}`): `erro: {codigo, descricao}`, one object;
 *   a DPS not found answers `tipoAmbiente: 0` and no `versaoAplicativo`, as captured twice;
 * - events: `erro: [{codigo, descricao}]`, a list;
 * - success of `POST /nfse`: `idDps` is "NFS" + the access key and `alertas` is null, not [];
 * - `dataHoraProcessamento` is Brasília time with seven fractional digits (.NET ticks) and -03:00.
 *
 * Codes the README lists keep its meaning (E0006, E0014, E0714, E0822, E0840, E1226, E1235, E2401,
 * E2404, E2406); E0718 (signature made with a certificate that is not the DPS issuer's) is the real
 * code as quoted from the national integration manual. The rest are this local authority's own
 * choices, in the national "E" + 4 digits shape, listed in `LocalAuthorityCodes` and marked "Not
 * real" there. Descriptions of the codes with a captured body (E0014 aside) are those bodies' texts;
 * the others are this module's wording.
 */

export const APPLICATION_VERSION = "SefinNacional_1.6.0"

export type EnvironmentCode = 1 | 2

/** Refusal codes and their descriptions (Portuguese, as the national system writes them). */
export const LocalAuthorityCodes = {
  /** Not real: the national system refuses a TLS session without a client certificate. */
  clientCertificateMissing: { code: "E0003", description: "Não foi possível obter o certificado de cliente." },
  environmentMismatch: {
    code: "E0006",
    description: "O tipo de ambiente informado no documento difere do ambiente de recepção do Sistema Nacional NFS-e."
  },
  duplicateDps: {
    code: "E0014",
    description:
      "Conjunto de Série, Número, Código do Município Emissor e CNPJ/CPF informado nesta DPS já existe em uma NFS-e gerada a partir de uma DPS enviada anteriormente."
  },
  /** What `simulate:reject` answers, as the built-in simulator does. */
  rejected: {
    code: "E0310",
    description: "O código de tributação nacional informado não é administrado pelo município de incidência do ISSQN."
  },
  signatureInvalid: { code: "E0714", description: "Assinatura digital do documento inválida." },
  signerIsNotIssuer: {
    code: "E0718",
    description: "A assinatura deve ser feita com o certificado digital do emitente da DPS."
  },
  /** What `simulate:cancel-reject` answers (the real code of a cancellation past its deadline). */
  cancellationRefused: {
    code: "E0822",
    description: "O prazo para o cancelamento da NFS-e expirou, conforme parametrização do município emissor da NFS-e."
  },
  /** Not real: this local authority takes cancellations (e101101) and analysis requests (e101103) only. */
  eventTypeNotSupported: { code: "E0801", description: "Tipo de evento não suportado pela autoridade local." },
  /** Not real: the access key in the path is not the one the event request names. */
  eventKeyMismatch: {
    code: "E0829",
    description: "A chave de acesso informada no pedido de registro de evento difere da chave de acesso da requisição."
  },
  alreadyCancelled: {
    code: "E0840",
    description:
      "O Sistema Nacional NFS-e não pode recepcionar o EVENTO DE CANCELAMENTO DE NFS-e, pois o evento de Cancelamento de NFS-e já está vinculado à NFS-e indicada no evento enviado."
  },
  /** Not real: the `subst` group names an access key this system never issued. */
  substitutedNotFound: { code: "E0901", description: "A NFS-e a ser substituída (chSubstda) não foi encontrada." },
  /** Not real: the substitute's issuer is not the replaced note's. */
  substitutedOtherIssuer: {
    code: "E0902",
    description: "O emitente da DPS substituta difere do emitente da NFS-e a ser substituída."
  },
  /** Not real: the replaced note is cancelled or was replaced already. */
  substitutedNotStanding: {
    code: "E0903",
    description: "A NFS-e a ser substituída está cancelada ou já foi substituída."
  },
  /** Not real: an analysis request (e101103) is already awaiting the municipality. */
  analysisPending: {
    code: "E0904",
    description: "Já existe solicitação de análise fiscal para cancelamento pendente para esta NFS-e."
  },
  /** Not real: the analysis is for a cancellation past its deadline; within it the issuer cancels. */
  analysisWithinDeadline: {
    code: "E0905",
    description: "A NFS-e ainda está no prazo de cancelamento pelo emitente; utilize o evento de cancelamento."
  },
  malformedCompressed: { code: "E1226", description: "Estrutura descompactada mal formada." },
  schemaViolation: { code: "E1235", description: "Falha no esquema XML do DF-e." },
  accessKeyNotFound: { code: "E2401", description: "Chave de acesso não encontrada." },
  /** Not real: a query for a document of another taxpayer than the client certificate's. */
  notYourDocument: { code: "E2403", description: "Consulta desta NFS-e não é permitida para este usuário." },
  dpsNotFound: { code: "E2404", description: "Não foi gerada uma NFS-e com o identificador de DPS informado" },
  /** Not real: a DPS id that is not 45 characters of the national shape. */
  malformedDpsId: { code: "E2405", description: "Identificador de DPS inválido." },
  malformedAccessKey: { code: "E2406", description: "A chave de acesso consultada deve conter 50 números." }
} as const

export type LocalAuthorityCode = (typeof LocalAuthorityCodes)[keyof typeof LocalAuthorityCodes]

const BRASILIA_OFFSET_MS = -3 * 3_600_000

/**
 * "2026-01-22T14:42:34.4777475-03:00": Brasília time (UTC-3 all year since 2019) with .NET's seven
 * fractional digits. The four digits past the millisecond come from the high-resolution clock, so
 * two answers in one millisecond still differ, as on the real system.
 */
export const processingTimestamp = (at: Date, subMillisecondTicks: number): string => {
  const local = new Date(at.getTime() + BRASILIA_OFFSET_MS).toISOString() // …T11:42:34.477Z
  const ticks = String(Math.trunc(subMillisecondTicks) % 10_000).padStart(4, "0")
  return `${local.slice(0, 23)}${ticks}-03:00`
}

/** Sub-millisecond ticks (100 ns) of the high-resolution clock. */
export const currentTicks = (): number => Number((process.hrtime.bigint() / 100n) % 10_000n)

interface Envelope {
  readonly environment: EnvironmentCode
  readonly processedAt: string
}

const envelope = (e: Envelope) => ({
  tipoAmbiente: e.environment,
  versaoAplicativo: APPLICATION_VERSION,
  dataHoraProcessamento: e.processedAt
})

export interface Refusal {
  readonly code: string
  readonly description: string
  readonly complement?: string
}

export const refusal = (entry: LocalAuthorityCode, complement?: string): Refusal =>
  complement === undefined
    ? { code: entry.code, description: entry.description }
    : { code: entry.code, description: entry.description, complement }

/** `POST /nfse` success (201). */
export const nfseCreated = (e: Envelope & { readonly accessKey: string; readonly nfseXmlGZipB64: string }) => ({
  ...envelope(e),
  idDps: `NFS${e.accessKey}`,
  chaveAcesso: e.accessKey,
  nfseXmlGZipB64: e.nfseXmlGZipB64,
  alertas: null
})

/** `POST /nfse` refusal: PascalCase `erros`, `idDPS` once the DPS was read. */
export const submitRefused = (
  e: Envelope & { readonly dpsId?: string | undefined; readonly errors: ReadonlyArray<Refusal> }
) => ({
  ...envelope(e),
  ...(e.dpsId === undefined ? {} : { idDPS: e.dpsId }),
  erros: e.errors.map((r) => ({
    Codigo: r.code,
    Descricao: r.description,
    ...(r.complement === undefined ? {} : { Complemento: r.complement })
  }))
})

/** `GET /dps/{id}` found (200): the access key only. */
export const dpsFound = (e: Envelope & { readonly accessKey: string }) => ({
  ...envelope(e),
  chaveAcesso: e.accessKey
})

/** `GET /dps/{id}` not found: the real answer says `tipoAmbiente: 0` and has no version. */
export const dpsNotFound = (processedAt: string) => ({
  tipoAmbiente: 0,
  dataHoraProcessamento: processedAt,
  erro: { codigo: LocalAuthorityCodes.dpsNotFound.code, descricao: LocalAuthorityCodes.dpsNotFound.description }
})

/** `GET /nfse/{chave}` found (200). */
export const nfseFound = (e: Envelope & { readonly accessKey: string; readonly nfseXmlGZipB64: string }) => ({
  ...envelope(e),
  chaveAcesso: e.accessKey,
  nfseXmlGZipB64: e.nfseXmlGZipB64
})

/** Query refusal: one lowercase `erro` object. */
export const queryRefused = (e: Envelope & { readonly error: Refusal }) => ({
  ...envelope(e),
  erro: {
    codigo: e.error.code,
    descricao: e.error.description,
    ...(e.error.complement === undefined ? {} : { complemento: e.error.complement })
  }
})

/** `POST /nfse/{chave}/eventos` success (201). */
export const eventRegistered = (e: Envelope & { readonly eventoXmlGZipB64: string }) => ({
  ...envelope(e),
  eventoXmlGZipB64: e.eventoXmlGZipB64
})

/** Event refusal: a lowercase `erro` list. */
export const eventRefused = (e: Envelope & { readonly errors: ReadonlyArray<Refusal> }) => ({
  ...envelope(e),
  erro: e.errors.map((r) => ({
    codigo: r.code,
    descricao: r.description,
    ...(r.complement === undefined ? {} : { complemento: r.complement })
  }))
})

/**
 * A body that is not the JSON the endpoint expects never reaches the national system's rules:
 * ASP.NET Core's model binding refuses it with a problem document, without `erros`.
 */
export const modelBindingProblem = (field: string, message: string) => ({
  type: "https://tools.ietf.org/html/rfc7231#section-6.5.1",
  title: "One or more validation errors occurred.",
  status: 400,
  errors: { [field]: [message] }
})

/** The page the real servers answer for a path outside the API (e.g. without /SefinNacional). */
export const NOT_FOUND_PAGE =
  `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"/>
<title>404 - File or directory not found.</title>
</head>
<body>
<div id="header"><h1>Server Error</h1></div>
<div id="content">
 <fieldset><h2>404 - File or directory not found.</h2>
  <h3>The resource you are looking for might have been removed, had its name changed, or is temporarily unavailable.</h3>
 </fieldset>
</div>
</body>
</html>
`

/** What a gateway in front of the real system answers while it is down. */
export const UNAVAILABLE_PAGE = `<!DOCTYPE html>
<html><head><title>503 Service Unavailable</title></head>
<body><h1>Service Unavailable</h1><p>The service is temporarily unavailable. Please try again later.</p></body></html>
`
