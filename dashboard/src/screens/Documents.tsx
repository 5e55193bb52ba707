/**
 * Documents (SPEC §6, §15): the list (DocumentList.tsx), and one document with every fact the API
 * keeps about it: its parties, its tax content (DocumentTaxes.tsx), its XML and PDF once
 * authorized, its substitution links, and its cancellation for owners and admins
 * (DocumentCancellation.tsx).
 */
import type { ComponentChildren } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { saveFile } from "../api.js"
import { formatDateTime, formatDay, formatMoney, formatTaxId, type Translate, useLang, useTexts } from "../i18n.js"
import { type MunicipalityLookup, MunicipalityName, placeName, useMunicipalities } from "../municipalities.js"
import { href } from "../router.js"
import { Async, CopyButton, EnvironmentBadge, ErrorNotice, useAction, useResource } from "../ui.js"
import { useWorkspace } from "../workspace.js"
import { CancellationSection } from "./DocumentCancellation.js"
import { DocumentList } from "./DocumentList.js"
import "./Documents.css"
import { ForeignTradeGroup, TaxGroups } from "./DocumentTaxes.js"
import {
  type AnyDocument,
  type Document,
  type GoodsDocument,
  IN_PROGRESS,
  POLL_MS,
  type Status,
  StatusBadge,
  text,
  WITH_FILES
} from "./DocumentTexts.js"
import { TakerMail } from "./TakerMail.js"

export const DocumentsScreen = ({ route }: { readonly route?: ReadonlyArray<string> }) => {
  const id = route?.[0]
  return id === undefined ? <DocumentList /> : <DocumentDetail id={id} key={id} />
}

// ---------------------------------------------------------------------------------------------
// One document

const DocumentDetail = ({ id }: { readonly id: string }) => {
  const t = useTexts(text)
  const { api, tenant, notify } = useWorkspace()
  const { resource, reload } = useResource(
    () => api.documents.get({ params: { tenantId: tenant.id, docId: id } }),
    [tenant.id, id]
  )
  // The last document read stays on screen while a later read fails (shown above it) or runs.
  const lastRead = useRef<AnyDocument | undefined>(undefined)
  if (resource.state === "ready") lastRead.current = resource.value
  const loaded = lastRead.current
  // The cancellation's answer is shown at once; a later read replaces it when it is newer.
  const [answered, setAnswered] = useState<AnyDocument | undefined>(undefined)
  const current = answered !== undefined && (loaded === undefined || answered.updated_at >= loaded.updated_at)
    ? answered
    : loaded
  const [refreshing, setRefreshing] = useState(false)
  const refresh = () => {
    setRefreshing(true)
    reload()
  }
  useEffect(() => setRefreshing(false), [resource])

  // Light polling while the background work may still change the document; it stops when the
  // status is final or the screen is left (the timer is cleared with the effect).
  useEffect(() => {
    if (current === undefined || !IN_PROGRESS.has(current.status)) return
    const timer = setTimeout(reload, POLL_MS)
    return () => clearTimeout(timer)
  }, [resource, current?.status])

  // A status change the person did not cause is announced to screen readers.
  const seen = useRef<Status | undefined>(undefined)
  useEffect(() => {
    if (current === undefined) return
    if (seen.current !== undefined && seen.current !== current.status) {
      notify(t("statusNow", { status: t(`status_${current.status}`) }))
    }
    seen.current = current.status
  }, [current?.status])

  return (
    <section aria-labelledby="document-title">
      <p class="back">
        <a href={href("documents")}>← {t("back")}</a>
      </p>
      {current === undefined
        ? (
          <>
            <h1 id="document-title">{t("title")}</h1>
            <Async resource={resource} onRetry={reload}>{() => null}</Async>
          </>
        )
        : (
          <>
            {resource.state === "failed" && <ErrorNotice failure={resource.failure} onRetry={reload} />}
            {answered !== undefined && current.status === "cancel_requested" && (
              <p class="notice ok">
                {current.cancellation?.analysis === true ? t("analysisRequested") : t("cancelRequested")}
              </p>
            )}
            {current.type === "service_invoice"
              ? (
                <DocumentView
                  document={current}
                  refreshing={refreshing}
                  onRefresh={refresh}
                  onCancelled={(document) => {
                    setAnswered(document)
                    const analysis = document.type === "service_invoice" && document.cancellation?.analysis === true
                    notify(analysis ? t("analysisRequested") : t("cancelRequested"))
                  }}
                />
              )
              : (
                <GoodsView
                  document={current}
                  refreshing={refreshing}
                  onRefresh={refresh}
                  onCancelled={(document) => {
                    setAnswered(document)
                    notify(t("cancelRequested"))
                  }}
                />
              )}
          </>
        )}
    </section>
  )
}

const DocumentView = ({ document, refreshing, onRefresh, onCancelled }: {
  readonly document: Document
  readonly refreshing: boolean
  readonly onRefresh: () => void
  readonly onCancelled: (document: AnyDocument) => void
}) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { taker, service, amounts, authority, rejection, last_error } = document
  const inProgress = IN_PROGRESS.has(document.status)
  return (
    <>
      <div class="toolbar">
        <h1 id="document-title">{t("detailTitle", { number: document.number, series: document.series })}</h1>
        <button type="button" onClick={onRefresh} disabled={refreshing}>
          {refreshing ? t("refreshing") : t("refresh")}
        </button>
      </div>
      <dl class="facts">
        <Fact label={t("status")}>
          <StatusBadge status={document.status} t={t} />
        </Fact>
        <Fact label={t("environment")}>
          <EnvironmentBadge environment={document.environment} label={t(document.environment)} />
        </Fact>
        <Fact label={t("number")}>{t("numberSeries", { number: document.number, series: document.series })}</Fact>
        <Fact label={t("reference")}>
          <span class="mono">{document.reference ?? t("noReference")}</span>
        </Fact>
        <Fact label={t("documentId")}>
          <span class="mono">{document.id}</span> <CopyButton text={document.id} name={t("copyId")} />
        </Fact>
        <Fact label={t("issueDate")}>{formatDay(document.issue_date, lang)}</Fact>
        <Fact label={t("total")}>{formatMoney(amounts.total, lang)}</Fact>
      </dl>
      {inProgress && <p class="notice info">{t("polling")}</p>}

      {rejection !== null && (
        <div class="notice error">
          <h2>{t("rejection")}</h2>
          <dl class="facts">
            <Fact label={t("code")}>
              <span class="mono">{rejection.code}</span>
            </Fact>
            <Fact label={t("message")}>{rejection.message}</Fact>
          </dl>
          <p>{t("rejectionHint")}</p>
        </div>
      )}

      <h2>{t("files")}</h2>
      {WITH_FILES.has(document.status) && authority !== null
        ? <Downloads document={document} accessKey={authority.access_key} />
        : <p class="hint">{t("noFiles")}</p>}

      <h2>{t("taker")}</h2>
      {taker === null ? <p class="hint">{t("noTaker")}</p> : <PartyFacts party={taker} t={t} />}
      {document.intermediary !== null && (
        <>
          <h2>{t("intermediary")}</h2>
          <PartyFacts party={document.intermediary} t={t} />
        </>
      )}

      <h2>{t("service")}</h2>
      <dl class="facts">
        <Fact label={t("serviceCode")}>
          <span class="mono">{service.code}</span>
        </Fact>
        {service.nbs_code !== undefined && (
          <Fact label={t("nbsCode")}>
            <span class="mono">{service.nbs_code}</span>
          </Fact>
        )}
        <Fact label={t("municipality")}>
          <MunicipalityName code={service.municipality_code} />
        </Fact>
        <Fact label={t("description")}>{service.description}</Fact>
        {document.notes !== null && <Fact label={t("notes")}>{document.notes}</Fact>}
      </dl>
      <ForeignTradeGroup tax={document.tax} />

      <TaxGroups document={document} />

      {(document.substitutes !== null || document.substituted_by !== null) && (
        <>
          <h2>{t("substitution")}</h2>
          <dl class="facts">
            {document.substitutes !== null && (
              <Fact label={t("substitutes")}>
                <a class="mono" href={href("documents", document.substitutes)}>{document.substitutes}</a>
              </Fact>
            )}
            {document.substitution !== null && (
              <Fact label={t("substitutionReason")}>
                {t(`substitution_${document.substitution.reason_code}`)}
                {document.substitution.reason === null ? "" : ` — ${document.substitution.reason}`}
              </Fact>
            )}
            {document.substitution !== null && (
              <Fact label={t("substitutionKey")}>
                <span class="mono">{document.substitution.original_access_key}</span>
              </Fact>
            )}
            {document.substituted_by !== null && (
              <Fact label={t("substitutedBy")}>
                <a class="mono" href={href("documents", document.substituted_by)}>{document.substituted_by}</a>
              </Fact>
            )}
          </dl>
          <p class="hint">{t("substitutionHint")}</p>
        </>
      )}

      <h2>{t("authority")}</h2>
      {authority === null
        ? <p class="hint">{t("notAuthorized")}</p>
        : (
          <dl class="facts">
            <Fact label={t("accessKey")}>
              <span class="mono">{authority.access_key}</span>{" "}
              <CopyButton text={authority.access_key} name={t("copyAccessKey")} />
            </Fact>
            {authority.nfse_number !== null && (
              <Fact label={t("nfseNumber")}>
                <span class="mono">{authority.nfse_number}</span>
              </Fact>
            )}
            <Fact label={t("protocol")}>
              <span class="mono">{authority.protocol}</span>
            </Fact>
            <Fact label={t("authorizedAt")}>{formatDateTime(authority.authorized_at, lang)}</Fact>
          </dl>
        )}

      <CancellationSection document={document} onCancelled={onCancelled} />

      {document.taker_notification !== null && (
        <TakerMail notification={document.taker_notification} email={taker?.email} />
      )}

      <h2>{t("processing")}</h2>
      <dl class="facts">
        <Fact label={t("attempts")}>{document.attempts}</Fact>
        <Fact label={t("lastError")}>
          {last_error === null
            ? t("noError")
            : (
              <>
                <span class="mono">{last_error.code}</span> {last_error.message}{" "}
                <span class="hint">({formatDateTime(last_error.at, lang)})</span>
              </>
            )}
        </Fact>
        <Fact label={t("created")}>{formatDateTime(document.created_at, lang)}</Fact>
        <Fact label={t("updated")}>{formatDateTime(document.updated_at, lang)}</Fact>
      </dl>
    </>
  )
}

/**
 * A goods invoice (NF-e, NFC-e): its facts, recipient, items, totals, the authority's answer and its
 * cancellation.
 */
const GoodsView = ({ document, refreshing, onRefresh, onCancelled }: {
  readonly document: GoodsDocument
  readonly refreshing: boolean
  readonly onRefresh: () => void
  readonly onCancelled: (document: AnyDocument) => void
}) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { authority, contingency, recipient, rejection, totals } = document
  // An NFC-e issued offline has its files (the signed note, its DANFE) before it is authorized.
  const fileKey = authority?.access_key ?? contingency?.access_key
  return (
    <>
      <div class="toolbar">
        <h1 id="document-title">{t("detailTitle", { number: document.number, series: document.series })}</h1>
        <button type="button" onClick={onRefresh} disabled={refreshing}>
          {refreshing ? t("refreshing") : t("refresh")}
        </button>
      </div>
      <dl class="facts">
        <Fact label={t("status")}>
          <StatusBadge status={document.status} t={t} />
        </Fact>
        <Fact label={t("environment")}>
          <EnvironmentBadge environment={document.environment} label={t(document.environment)} />
        </Fact>
        <Fact label={t("type")}>{t(`type_${document.type}`)}</Fact>
        <Fact label={t("number")}>{t("numberSeries", { number: document.number, series: document.series })}</Fact>
        <Fact label={t("reference")}>
          <span class="mono">{document.reference ?? t("noReference")}</span>
        </Fact>
        <Fact label={t("documentId")}>
          <span class="mono">{document.id}</span> <CopyButton text={document.id} name={t("copyId")} />
        </Fact>
        <Fact label={t("issueDate")}>{formatDay(document.issue_date, lang)}</Fact>
        <Fact label={t("total")}>{formatMoney(totals.total, lang)}</Fact>
      </dl>
      {IN_PROGRESS.has(document.status) && <p class="notice info">{t("polling")}</p>}
      {contingency !== null && (
        <div class={document.status === "contingency" ? "notice warning" : "notice info"}>
          <h2>{t("contingency")}</h2>
          <dl class="facts">
            <Fact label={t("contingencySince")}>{formatDateTime(contingency.since, lang)}</Fact>
            <Fact label={t("contingencyTransmitBy")}>{formatDateTime(contingency.transmit_by, lang)}</Fact>
          </dl>
          <p>{t(document.status === "contingency" ? "contingencyPending" : "contingencyTransmitted")}</p>
        </div>
      )}
      {rejection !== null && (
        <div class="notice error">
          <h2>{t("rejection")}</h2>
          <dl class="facts">
            <Fact label={t("code")}>
              <span class="mono">{rejection.code}</span>
            </Fact>
            <Fact label={t("message")}>{rejection.message}</Fact>
          </dl>
          <p>{t("rejectionHint")}</p>
        </div>
      )}

      <h2>{t("files")}</h2>
      {WITH_FILES.has(document.status) && fileKey !== undefined
        ? <Downloads document={document} accessKey={fileKey} />
        : <p class="hint">{t("noFiles")}</p>}

      <h2>{t("recipient")}</h2>
      {recipient === undefined
        ? <p class="hint">{t("noRecipient")}</p>
        : (
          <dl class="facts">
            <Fact label={t("takerName")}>{recipient.name}</Fact>
            <Fact label={t("taxId")}>
              <span class="mono">
                {recipient.tax_id !== undefined ? formatTaxId(recipient.tax_id) : recipient.foreign_id ?? "—"}
              </span>
            </Fact>
            <Fact label={t("email")}>{recipient.email ?? "—"}</Fact>
          </dl>
        )}

      <h2>{t("items")}</h2>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t("itemCode")}</th>
              <th scope="col">{t("itemDescription")}</th>
              <th scope="col">{t("ncm")}</th>
              <th scope="col">{t("cfop")}</th>
              <th scope="col" class="num">{t("quantity")}</th>
              <th scope="col" class="num">{t("unitPrice")}</th>
            </tr>
          </thead>
          <tbody>
            {document.items.map((item, i) => (
              <tr key={i}>
                <td class="mono">{item.code}</td>
                <td>{item.description}</td>
                <td class="mono">{item.ncm}</td>
                <td class="mono">{item.cfop}</td>
                <td class="num">{item.quantity} {item.unit}</td>
                <td class="num">
                  {item.unit_amount !== undefined ? formatMoney(item.unit_amount, lang) : item.unit_amount_decimal}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <h2>{t("totals")}</h2>
      <dl class="facts">
        <Fact label={t("totalProducts")}>{formatMoney(totals.products, lang)}</Fact>
        <Fact label={t("totalDiscount")}>{formatMoney(totals.discount, lang)}</Fact>
        <Fact label={t("totalFreight")}>{formatMoney(totals.freight, lang)}</Fact>
        <Fact label={t("totalIcms")}>{formatMoney(totals.icms, lang)}</Fact>
        <Fact label={t("totalIpi")}>{formatMoney(totals.ipi, lang)}</Fact>
        <Fact label={t("total")}>{formatMoney(totals.total, lang)}</Fact>
      </dl>

      <h2>{t("authority")}</h2>
      {authority === null
        ? <p class="hint">{t("notAuthorized")}</p>
        : (
          <dl class="facts">
            <Fact label={t("accessKey")}>
              <span class="mono">{authority.access_key}</span>{" "}
              <CopyButton text={authority.access_key} name={t("copyAccessKey")} />
            </Fact>
            <Fact label={t("protocol")}>
              <span class="mono">{authority.protocol}</span>
            </Fact>
            <Fact label={t("authorizedAt")}>{formatDateTime(authority.authorized_at, lang)}</Fact>
          </dl>
        )}

      <CancellationSection document={document} onCancelled={onCancelled} />

      <h2>{t("processing")}</h2>
      <dl class="facts">
        <Fact label={t("attempts")}>{document.attempts}</Fact>
        <Fact label={t("lastError")}>
          {document.last_error === null
            ? t("noError")
            : (
              <>
                <span class="mono">{document.last_error.code}</span> {document.last_error.message}
              </>
            )}
        </Fact>
        <Fact label={t("created")}>{formatDateTime(document.created_at, lang)}</Fact>
        <Fact label={t("updated")}>{formatDateTime(document.updated_at, lang)}</Fact>
      </dl>
    </>
  )
}

const Fact = ({ label, children }: { readonly label: string; readonly children: ComponentChildren }) => (
  <div>
    <dt>{label}</dt>
    <dd>{children}</dd>
  </div>
)

/** The file name's prefix of a note of each type. */
const FILE_PREFIX = { service_invoice: "NFSe", product_invoice: "NFe", consumer_invoice: "NFCe" } as const

const Downloads = ({ document, accessKey }: { readonly document: AnyDocument; readonly accessKey: string }) => {
  const t = useTexts(text)
  const { api, tenant, notify } = useWorkspace()
  const action = useAction()
  const params = { tenantId: tenant.id, docId: document.id }
  const download = (kind: "xml" | "pdf") =>
    action.run(async () => {
      const name = `${FILE_PREFIX[document.type]}-${accessKey}.${kind}`
      if (kind === "xml") {
        const file = await api.documentFiles.xml({ params })
        saveFile(file.body, "application/xml", name)
      } else {
        const file = await api.documentFiles.pdf({ params })
        // A copy on its own ArrayBuffer, which is what a Blob takes.
        saveFile(new Uint8Array(file.body), "application/pdf", name)
      }
      notify(t("downloaded", { name }))
    })
  return (
    <>
      <div class="actions">
        <button type="button" disabled={action.busy} onClick={() => download("xml")}>{t("downloadXml")}</button>
        <button type="button" disabled={action.busy} onClick={() => download("pdf")}>
          {t(document.type === "service_invoice" ? "downloadPdf" : "downloadDanfe")}
        </button>
      </div>
      {action.failure && <ErrorNotice failure={action.failure} />}
    </>
  )
}

// ---------------------------------------------------------------------------------------------
// Formatting

type Party = NonNullable<Document["taker"]>

/** A taker's or intermediary's facts: whichever id it has, and its address in Brazil or abroad. */
const PartyFacts = ({ party, t }: { readonly party: Party; readonly t: Translate<keyof typeof text.en> }) => (
  <dl class="facts">
    <Fact label={t("takerName")}>{party.name}</Fact>
    <Fact label={t("taxId")}>
      <span class="mono">
        {party.tax_id !== undefined ? formatTaxId(party.tax_id) : party.nif ?? party.no_nif_reason ?? "—"}
      </span>
    </Fact>
    {party.municipal_registration !== undefined && (
      <Fact label={t("municipalRegistration")}>
        <span class="mono">{party.municipal_registration}</span>
      </Fact>
    )}
    <Fact label={t("email")}>{party.email ?? "—"}</Fact>
    {party.phone !== undefined && <Fact label={t("phone")}>{party.phone}</Fact>}
    <Fact label={t("address")}>
      {party.address !== undefined
        ? <AddressInBrazil address={party.address} />
        : party.foreign_address !== undefined
        ? [
          party.foreign_address.street,
          party.foreign_address.number,
          party.foreign_address.city,
          party.foreign_address.country
        ].join(", ")
        : "—"}
    </Fact>
  </dl>
)

/** An address in Brazil on one line, its municipality by name. */
const AddressInBrazil = ({ address }: { readonly address: NonNullable<Party["address"]> }) => {
  const municipalities = useMunicipalities()
  return <>{formatAddress(address, municipalities)}</>
}

const formatAddress = (address: NonNullable<Party["address"]>, municipalities: MunicipalityLookup | undefined) =>
  [
    [address.street, address.number, address.complement].filter((part) => part !== undefined).join(", "),
    address.district,
    placeName(municipalities, address.municipality_code, address.state),
    `CEP ${address.postal_code.slice(0, 5)}-${address.postal_code.slice(5)}`
  ].join(" — ")
