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
 * E2404, E2406). The DPS and substitution rules' codes are those of Anexo I's sheet "RN DPS_NFS-e"
 * (ANEXO_I-SEFIN_ADN-DPS_NFSe-SNNFSe-v1.00-20251226.xlsx, 26/12/2025), the event rules' those of
 * Anexo II's sheets "RN EVENTO_PED.REG.EVENTO" and "RN EVENTOSxEVENTOS"
 * (ANEXO_II-SEFIN_ADN-PEDREGEVT_EVT-SNNFSe-v1.00-20251226.xlsx); each entry names its row. The
 * entries marked "Not real" are rules neither annex has (a limit of this local authority, or an
 * API-level check): they keep a code of their own in the national "E" + 4 digits shape.
 * Descriptions of the codes with a captured body (E0014 aside) are those bodies' texts; the others
 * are the annexes' messages, or this module's wording for the codes marked "Not real".
 */

export const APPLICATION_VERSION = "SefinNacional_1.6.0"

export type EnvironmentCode = 1 | 2

/** E0848's message, with the event already on the note where the annex leaves a placeholder. */
const analysisBlockedBy = (event: string) =>
  "O Sistema Nacional NFS-e não pode recepecionar o EVENTO DE SOLICITAÇÃO DE ANÁLISE FISCAL PARA CANCELAMENTO DE " +
  `NFS-e pois, o evento de ${event} já está vinculado à NFS-e indicada no evento enviado, impedindo sua recepção.`

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
  /** Anexo I row 472. */
  unsigned: { code: "E0717", description: "A assinatura é obrigatória quando for enviado para o Web Service." },
  /** Anexo I row 473. */
  signerIsNotIssuer: {
    code: "E0718",
    description: "A assinatura deve ser feita com o certificado digital do emitente da DPS."
  },
  /** Anexo II row 102: the pedRegEvento's own signature code. */
  eventSignatureInvalid: { code: "E1980", description: "Arquivo enviado com erro na assinatura." },
  /** Anexo II row 105. */
  eventUnsigned: { code: "E1989", description: "A assinatura é obrigatória quando for enviado para o Web Service." },
  /** Anexo II row 106. */
  eventSignerIsNotIssuer: {
    code: "E1991",
    description: "A assinatura deve ser feita com o certificado digital do emitente do Pedido de Registro de Evento."
  },
  /** What `simulate:cancel-reject` answers (the real code of a cancellation past its deadline). */
  cancellationRefused: {
    code: "E0822",
    description: "O prazo para o cancelamento da NFS-e expirou, conforme parametrização do município emissor da NFS-e."
  },
  /**
   * Not real: this local authority takes cancellations (e101101) and analysis requests (e101103)
   * only; the national system takes every event type of Anexo II.
   */
  eventTypeNotSupported: { code: "E0801", description: "Tipo de evento não suportado pela autoridade local." },
  /** Not real: the access key in the path is not the one the event request names (an API-level check). */
  eventKeyMismatch: {
    code: "E0829",
    description: "A chave de acesso informada no pedido de registro de evento difere da chave de acesso da requisição."
  },
  alreadyCancelled: {
    code: "E0840",
    description:
      "O Sistema Nacional NFS-e não pode recepcionar o EVENTO DE CANCELAMENTO DE NFS-e, pois o evento de Cancelamento de NFS-e já está vinculado à NFS-e indicada no evento enviado."
  },
  /** Anexo I row 95: the `subst` group names an access key this system never issued. */
  substitutedNotFound: {
    code: "E0044",
    description:
      "NFS-e não existe na base de dados do autorizador de NFS-e nacional. Informe uma chave de NFS-e existente."
  },
  /**
   * Anexo I row 94, its check 2: the replaced note's key must name the substitute's municipality,
   * kind of registration and registration (here: its issuer).
   */
  substitutedOtherIssuer: { code: "E0042", description: "Chave de NFS-e a ser substituída é inválida." },
  /** Anexo I row 96: the replaced note is cancelled, by an event or by an earlier substitution. */
  substitutedNotStanding: {
    code: "E0046",
    description: "Uma NFS-e cancelada não pode ser substituída. Informe uma chave de NFS-e não cancelada anteriormente."
  },
  /**
   * Anexo II row 44 and "RN EVENTOSxEVENTOS" row 4: an analysis request (e101103) while one awaits
   * the municipality, or on a note cancelled already.
   */
  analysisPending: {
    code: "E0848",
    description: analysisBlockedBy("Solicitação de Análise Fiscal para Cancelamento de NFS-e")
  },
  analysisOnCancelled: { code: "E0848", description: analysisBlockedBy("Cancelamento de NFS-e") },
  /**
   * Not real: the analysis is for a cancellation past its deadline; within it the issuer cancels.
   * Anexo II has no such rule (its matrix lets e101103 follow no event at all): this local
   * authority refuses it so a client is shown to cancel instead.
   */
  analysisWithinDeadline: {
    code: "E0905",
    description: "A NFS-e ainda está no prazo de cancelamento pelo emitente; utilize o evento de cancelamento."
  },
  malformedCompressed: { code: "E1226", description: "Estrutura descompactada mal formada." },
  schemaViolation: { code: "E1235", description: "Falha no esquema XML do DF-e." },
  accessKeyNotFound: { code: "E2401", description: "Chave de acesso não encontrada." },
  /** Not real: a query for a document of another taxpayer than the client certificate's (API level). */
  notYourDocument: { code: "E2403", description: "Consulta desta NFS-e não é permitida para este usuário." },
  dpsNotFound: { code: "E2404", description: "Não foi gerada uma NFS-e com o identificador de DPS informado" },
  /** Not real: a DPS id that is not 45 characters of the national shape (API level). */
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
