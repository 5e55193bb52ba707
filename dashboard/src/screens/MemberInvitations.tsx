/**
 * Inviting people to the tenant (SPEC §5, §15), on the Members screen: owners and admins invite an
 * address with a role (the person receives a link by e-mail and joins by accepting it, registering
 * there if new); the pending invitations are listed for every member, and owners and admins resend
 * (a new link, the old one stops working) or revoke them.
 */
import { useState } from "preact/hooks"
import type { Api, Failure } from "../api.js"
import { formatDateTime, texts, type Translate, useLang, useTexts } from "../i18n.js"
import { Badge, Confirm, Empty, ErrorNotice, PagedTable, useAction, usePages } from "../ui.js"
import { type Role, useWorkspace } from "../workspace.js"

type Invitation = Awaited<ReturnType<Api["invitations"]["list"]>>["data"][number]

const ROLES = ["owner", "admin", "developer"] as const satisfies ReadonlyArray<Role>

const text = texts({
  en: {
    inviteTitle: "Invite a member",
    inviteLead:
      "We e-mail them a link, valid for 7 days. They join with the role you choose once they accept it; someone new creates their account there, without a company.",
    inviteEmail: "Their email",
    inviteRole: "Role",
    inviteSubmit: "Send invitation",
    working: "Working…",
    invited: "Invitation sent to {email}.",
    alreadyInvited:
      "{email} is already a member, or already has a pending invitation: resend that one from the list below.",
    ownerOnly: "Only an owner can invite an owner, or manage an invitation to the owner role.",
    pendingTitle: "Pending invitations",
    noPending: "No pending invitations.",
    email: "Email",
    role: "Role",
    invitedBy: "Invited by",
    expires: "Expires",
    actions: "Actions",
    resend: "Resend",
    revoke: "Revoke",
    resent: "A new link was sent to {email}; the previous one no longer works.",
    revokeTitle: "Revoke the invitation to {email}?",
    revokeBody: "Its link stops working at once. You can invite the address again later.",
    revokeConfirm: "Revoke invitation",
    revoked: "Invitation to {email} revoked.",
    role_owner: "owner",
    role_admin: "admin",
    role_developer: "developer"
  },
  pt: {
    inviteTitle: "Convidar um membro",
    inviteLead:
      "Enviamos um link por e-mail, válido por 7 dias. A pessoa entra com o papel escolhido quando aceitar; quem ainda não tem conta cria a sua ali mesmo, sem empresa.",
    inviteEmail: "E-mail da pessoa",
    inviteRole: "Papel",
    inviteSubmit: "Enviar convite",
    working: "Processando…",
    invited: "Convite enviado para {email}.",
    alreadyInvited: "{email} já é membro ou já tem um convite pendente: reenvie esse convite pela lista abaixo.",
    ownerOnly: "Só um proprietário pode convidar um proprietário ou gerenciar um convite para esse papel.",
    pendingTitle: "Convites pendentes",
    noPending: "Nenhum convite pendente.",
    email: "E-mail",
    role: "Papel",
    invitedBy: "Convidado por",
    expires: "Expira em",
    actions: "Ações",
    resend: "Reenviar",
    revoke: "Revogar",
    resent: "Um novo link foi enviado para {email}; o anterior deixou de valer.",
    revokeTitle: "Revogar o convite para {email}?",
    revokeBody: "O link deixa de valer na hora. Você pode convidar o endereço de novo depois.",
    revokeConfirm: "Revogar convite",
    revoked: "Convite para {email} revogado.",
    role_owner: "proprietário",
    role_admin: "administrador",
    role_developer: "desenvolvedor"
  }
})

type Key = keyof typeof text.en

const explain = (failure: Failure, t: Translate<Key>, email: string): Failure =>
  failure.code === "conflict"
    ? { ...failure, explanation: t("alreadyInvited", { email }) }
    : failure.code === "forbidden"
    ? { ...failure, explanation: t("ownerOnly") }
    : failure

/** The invite form and the pending invitations, for the Members screen. */
export const MemberInvitations = () => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant, role, canManage, notify } = useWorkspace()
  const pages = usePages(
    (startingAfter) =>
      api.invitations.list({
        params: { tenantId: tenant.id },
        query: startingAfter === undefined ? { limit: 50 } : { limit: 50, starting_after: startingAfter }
      }),
    [tenant.id]
  )
  const [revoking, setRevoking] = useState<Invitation | undefined>(undefined)
  const row = useAction()
  const [failedEmail, setFailedEmail] = useState("")
  const mayManage = (invitation: Invitation) => canManage && (invitation.role !== "owner" || role === "owner")
  const resend = (invitation: Invitation) => {
    setFailedEmail(invitation.email)
    void row.run(async () => {
      await api.invitations.resend({ params: { tenantId: tenant.id, invitationId: invitation.id } })
      pages.reload()
      notify(t("resent", { email: invitation.email }))
    })
  }
  return (
    <>
      {canManage && (
        <InviteForm
          offerOwner={role === "owner"}
          onInvited={(email) => {
            pages.reload()
            notify(t("invited", { email }))
          }}
        />
      )}
      <h2 id="pending-title">{t("pendingTitle")}</h2>
      {row.failure && <ErrorNotice failure={explain(row.failure, t, failedEmail)} />}
      <PagedTable
        pages={pages}
        empty={<Empty title={t("noPending")} />}
        labelledBy="pending-title"
        columns={[t("email"), t("role"), t("invitedBy"), t("expires"), canManage && t("actions")]}
        row={(invitation) => (
          <tr key={invitation.id}>
            <th scope="row" data-label={t("email")}>
              <span class="email">{invitation.email}</span>
            </th>
            <td data-label={t("role")}>
              <Badge tone="muted">{t(`role_${invitation.role}`)}</Badge>
            </td>
            <td data-label={t("invitedBy")}>{invitation.invited_by.name ?? "—"}</td>
            <td data-label={t("expires")}>{formatDateTime(invitation.expires_at, lang)}</td>
            {canManage && (
              <td data-label={t("actions")}>
                {mayManage(invitation) && (
                  <div class="row-actions">
                    <button type="button" disabled={row.busy} onClick={() => resend(invitation)}>
                      {t("resend")}
                      <span class="visually-hidden">{invitation.email}</span>
                    </button>
                    <button type="button" class="danger" onClick={() => setRevoking(invitation)}>
                      {t("revoke")}
                      <span class="visually-hidden">{invitation.email}</span>
                    </button>
                  </div>
                )}
              </td>
            )}
          </tr>
        )}
      />
      {revoking !== undefined && (
        <Confirm
          title={t("revokeTitle", { email: revoking.email })}
          body={<p>{t("revokeBody")}</p>}
          confirmLabel={t("revokeConfirm")}
          onClose={() => setRevoking(undefined)}
          onConfirm={() =>
            api.invitations.revoke({ params: { tenantId: tenant.id, invitationId: revoking.id } }).then(() => {
              pages.reload()
              notify(t("revoked", { email: revoking.email }))
            })}
        />
      )}
    </>
  )
}

const InviteForm = ({ offerOwner, onInvited }: {
  readonly offerOwner: boolean
  readonly onInvited: (email: string) => void
}) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant } = useWorkspace()
  const action = useAction()
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<Role>("developer")
  // The address the last attempt named, for its error message (the field may have changed since).
  const [tried, setTried] = useState("")
  const submit = (event: Event) => {
    event.preventDefault()
    const address = email.trim()
    setTried(address)
    void action.run(async () => {
      await api.invitations.create({
        params: { tenantId: tenant.id },
        // The mail goes out in the inviter's language: the best guess of the person's.
        payload: { email: address, role, locale: lang === "pt" ? "pt-BR" : "en" }
      })
      setEmail("")
      setRole("developer")
      onInvited(address)
    })
  }
  return (
    <form class="add-member" onSubmit={submit} aria-labelledby="invite-title">
      <h2 id="invite-title">{t("inviteTitle")}</h2>
      <p class="hint">{t("inviteLead")}</p>
      <div class="filters">
        <label>
          {t("inviteEmail")}
          <input
            type="email"
            name="email"
            required
            autoComplete="off"
            value={email}
            onInput={(event) => {
              setEmail(event.currentTarget.value)
              action.clear()
            }}
          />
        </label>
        <label>
          {t("inviteRole")}
          <select name="role" value={role} onChange={(event) => setRole(event.currentTarget.value as Role)}>
            {ROLES.filter((candidate) => offerOwner || candidate !== "owner").map((candidate) => (
              <option key={candidate} value={candidate}>{t(`role_${candidate}`)}</option>
            ))}
          </select>
        </label>
        <div class="actions">
          <button type="submit" class="primary" disabled={action.busy}>
            {action.busy ? t("working") : t("inviteSubmit")}
          </button>
        </div>
      </div>
      {action.failure && <ErrorNotice failure={explain(action.failure, t, tried)} />}
    </form>
  )
}
