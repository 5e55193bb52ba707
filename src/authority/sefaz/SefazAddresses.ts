/**
 * Which authority serves an emitter and where its web services answer. Each state authorizes its
 * emitters' notes itself or through a shared authorizer (SVRS, the Rio Grande do Sul virtual
 * SEFAZ; SVAN, the national one), per model: the published map ("autorizadores") and each
 * authorizer's service addresses per environment. The Portal Nacional da NF-e publishes them and is
 * out of our build machines' reach; `sefaz-addresses.json` was extracted from the lists the public
 * library `nfephp-org/sped-nfe` maintains (`storage/autorizadores.json`,
 * `storage/wsnfe_4.00_mod55.xml` and `storage/wsnfe_4.00_mod65.xml`, commit 3b44ec9 of 23/06/2026),
 * keeping the six services of layout 4.00 the service uses.
 */
import type { Environment } from "../../domain/Principal.js"
import type { NfeModel } from "./NfeAccessKey.js"
import table from "./sefaz-addresses.json" with { type: "json" }

export type SefazService =
  | "NfeAutorizacao"
  | "NfeRetAutorizacao"
  | "NfeConsultaProtocolo"
  | "NfeStatusServico"
  | "RecepcaoEvento"
  | "NfeInutilizacao"

type Addresses = Readonly<Partial<Record<SefazService, string>>>

const authorizers = table.authorizers as Readonly<Record<NfeModel, Readonly<Record<string, string>>>>
const services = table.services as Readonly<
  Record<NfeModel, Readonly<Record<string, Readonly<Partial<Record<"live" | "test", Addresses>>>>>>
>

/** The authorizer of a state's notes of a model ("SP", "SVRS", "SVAN"…). */
export const authorizerOf = (model: NfeModel, state: string): string => {
  const authorizer = authorizers[model][state]
  // The states are the 27 of the payload's schema, each in the map.
  if (authorizer === undefined) throw new Error(`no authorizer of model ${model} for state ${state}`)
  return authorizer
}

/** The address of one web service of the authorizer of a state's notes, in an environment. */
export const sefazAddress = (
  model: NfeModel,
  state: string,
  environment: Environment,
  service: SefazService
): string => {
  const authorizer = authorizerOf(model, state)
  const address = services[model][authorizer]?.[environment]?.[service]
  if (address === undefined) throw new Error(`no ${service} of ${authorizer} (model ${model}, ${environment})`)
  return address
}

/** Each service's file name under an authorizer's web-service folder (the layout 4.00 names). */
export const SERVICE_FILES: Readonly<Record<SefazService, string>> = {
  NfeAutorizacao: "NFeAutorizacao4.asmx",
  NfeRetAutorizacao: "NFeRetAutorizacao4.asmx",
  NfeConsultaProtocolo: "NFeConsultaProtocolo4.asmx",
  NfeStatusServico: "NFeStatusServico4.asmx",
  RecepcaoEvento: "NFeRecepcaoEvento4.asmx",
  NfeInutilizacao: "NFeInutilizacao4.asmx"
}

/** Every state's services at one base URL (`{base}/ws/{file}`): the local SEFAZ, or a proxy in front of the authorities. */
export const addressesAt =
  (base: string) => (_model: NfeModel, _state: string, _environment: Environment, service: SefazService) =>
    `${base}/ws/${SERVICE_FILES[service]}`
