/**
 * The tenant's members (SPEC §5, §15): who they are and their roles; owners and admins invite people
 * by email (MemberInvitations.tsx), change roles and remove members; every member may leave. The server
 * decides who may do what (only an owner touches the owner role; the last owner stays): the page
 * offers what the person's role allows and shows the server's refusal when it comes anyway.
 */
import { useState } from "preact/hooks"
import { type Api, type Failure, failureOf } from "../api.js"
import { formatDate, type Lang, texts, type Translate, useLang, useTexts } from "../i18n.js"
import { Badge, Confirm, Dialog, Empty, ErrorNotice, PagedTable, useAction, usePages } from "../ui.js"
import { type Role, useWorkspace } from "../workspace.js"
import { MemberInvitations } from "./MemberInvitations.js"
import "./Members.css"

type Member = Awaited<ReturnType<Api["tenants"]["listMembers"]>>["data"][number]

const PAGE = 50
const ROLES = ["owner", "admin", "developer"] as const satisfies ReadonlyArray<Role>

const text = texts({
  en: {
    title: "Members",
    lead: "The people who can use this dashboard for {tenant}, and what each may do.",
    readOnly:
      "Your role in this tenant is developer: you can see the members and invitations, but only owners and admins invite, change or remove members. You may leave the tenant yourself.",
    name: "Name",
    email: "Email",
    role: "Role",
    rolesTitle: "What each role may do",
    since: "Member since",
    actions: "Actions",
    you: "you",
    noName: "(no name)",
    role_owner: "owner",
    role_admin: "admin",
    role_developer: "developer",
    roleHelp_owner: "Everything an admin does, and grants or takes away the owner role.",
    roleHelp_admin: "Manages API keys, members, webhooks and the certificate; cancels documents.",
    roleHelp_developer: "Reads everything, changes nothing.",
    working: "Working…",
    ownerOnly: "Only an owner can do this with the owner role.",
    lastOwner: "This is the tenant's last owner: make another member an owner first.",
    changeRole: "Change role",
    changeTitle: "Change {name}'s role",
    changeSubmit: "Save role",
    cancel: "Cancel",
    changed: "{name} is now {role}.",
    remove: "Remove",
    leave: "Leave tenant",
    removeTitle: "Remove {name}?",
    removeBody: "{name} loses access to {tenant} at once. Their API keys stay: revoke any they should no longer use.",
    removeConfirm: "Remove member",
    removed: "{name} removed.",
    leaveTitle: "Leave {tenant}?",
    leaveBody: "You lose access to {tenant} at once. To come back, an owner or admin must invite you again.",
    leaveConfirm: "Leave tenant",
    ownerProtected: "Only an owner can change or remove an owner.",
    emptyTitle: "No members to show."
  },
  pt: {
    title: "Membros",
    lead: "As pessoas que podem usar este painel por {tenant} e o que cada uma pode fazer.",
    readOnly:
      "Seu papel nesta conta é desenvolvedor: você vê os membros e os convites, mas só proprietários e administradores convidam, alteram ou removem membros. Você pode sair da conta por conta própria.",
    name: "Nome",
    email: "E-mail",
    role: "Papel",
    rolesTitle: "O que cada papel pode fazer",
    since: "Membro desde",
    actions: "Ações",
    you: "você",
    noName: "(sem nome)",
    role_owner: "proprietário",
    role_admin: "administrador",
    role_developer: "desenvolvedor",
    roleHelp_owner: "Tudo o que um administrador faz, e concede ou retira o papel de proprietário.",
    roleHelp_admin: "Gerencia chaves de API, membros, webhooks e o certificado; cancela documentos.",
    roleHelp_developer: "Consulta tudo, não altera nada.",
    working: "Processando…",
    ownerOnly: "Só um proprietário pode fazer isso com o papel de proprietário.",
    lastOwner: "Este é o último proprietário da conta: torne outro membro proprietário antes.",
    changeRole: "Alterar papel",
    changeTitle: "Alterar o papel de {name}",
    changeSubmit: "Salvar papel",
    cancel: "Cancelar",
    changed: "{name} agora é {role}.",
    remove: "Remover",
    leave: "Sair da conta",
    removeTitle: "Remover {name}?",
    removeBody:
      "{name} perde o acesso a {tenant} na hora. As chaves de API continuam: revogue as que não devam mais ser usadas.",
    removeConfirm: "Remover membro",
    removed: "{name} removido.",
    leaveTitle: "Sair de {tenant}?",
    leaveBody:
      "Você perde o acesso a {tenant} na hora. Para voltar, um proprietário ou administrador precisa convidar você de novo.",
    leaveConfirm: "Sair da conta",
    ownerProtected: "Só um proprietário pode alterar ou remover um proprietário.",
    emptyTitle: "Nenhum membro para mostrar."
  }
})

type Key = keyof typeof text.en

/**
 * The refusals this screen can explain better than the API's English message, in the person's
 * language: what the attempt was about says which rule refused it.
 */
const explain = (failure: Failure, t: Translate<Key>, about: { readonly ownerRole: boolean }): Failure => {
  switch (failure.code) {
    case "invalid_state":
      return { ...failure, explanation: t("lastOwner") }
    case "forbidden":
      return about.ownerRole ? { ...failure, explanation: t("ownerOnly") } : failure
    default:
      return failure
  }
}

/** A call whose refusal reaches `Confirm` already explained (Confirm shows what it is given). */
const explained = <A extends unknown>(call: Promise<A>, t: Translate<Key>, ownerRole: boolean): Promise<A> =>
  call.catch((error: unknown) => {
    throw explain(failureOf(error), t, { ownerRole })
  })

type Open =
  | { readonly dialog: "role"; readonly member: Member }
  | { readonly dialog: "remove"; readonly member: Member }

export const MembersScreen = () => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant, user, role, canManage, notify } = useWorkspace()
  const pages = usePages(
    (startingAfter) =>
      api.tenants
        .listMembers({
          params: { tenantId: tenant.id },
          query: startingAfter === undefined ? { limit: PAGE } : { limit: PAGE, starting_after: startingAfter }
        })
        // The list's cursor is the member's user id.
        .then((page) => ({ ...page, data: page.data.map((member) => ({ id: member.user.id, member })) })),
    [tenant.id]
  )
  const [open, setOpen] = useState<Open | undefined>(undefined)
  const close = () => setOpen(undefined)
  const nameOf = (member: Member) => member.user.name ?? member.user.email
  const isSelf = (member: Member) => member.user.id === user.id
  // What the page offers; the server checks it again under the tenant's lock.
  const mayChange = (member: Member) => canManage && (member.role !== "owner" || role === "owner")
  const mayRemove = (member: Member) => isSelf(member) || mayChange(member)
  return (
    <section aria-labelledby="members-title" class="members">
      <h1 id="members-title">{t("title")}</h1>
      <p class="hint">{t("lead", { tenant: tenant.name })}</p>
      {!canManage && <p class="notice info">{t("readOnly")}</p>}
      <PagedTable
        pages={pages}
        empty={<Empty title={t("emptyTitle")} />}
        columns={[t("name"), t("email"), t("role"), t("since"), t("actions")]}
        row={({ member }) => (
          <MemberRow
            key={member.user.id}
            member={member}
            self={isSelf(member)}
            mayChange={mayChange(member)}
            mayRemove={mayRemove(member)}
            protectedOwner={canManage && !mayChange(member)}
            onChange={() => setOpen({ dialog: "role", member })}
            onRemove={() => setOpen({ dialog: "remove", member })}
            t={t}
            lang={lang}
          />
        )}
      />
      <MemberInvitations />
      <RoleHelp t={t} />
      {open?.dialog === "role" && (
        <RoleDialog
          member={open.member}
          name={nameOf(open.member)}
          offerOwner={role === "owner"}
          onClose={close}
          onChanged={(changed) => {
            notify(t("changed", { name: nameOf(changed), role: t(`role_${changed.role}`) }))
            // A person who changed their own role works under the new one from now on: the frame
            // read the role when the page loaded, so it is read again.
            if (isSelf(changed)) location.reload()
            else pages.reload()
          }}
        />
      )}
      {open?.dialog === "remove" && (
        isSelf(open.member)
          ? (
            <Confirm
              title={t("leaveTitle", { tenant: tenant.name })}
              body={<p>{t("leaveBody", { tenant: tenant.name })}</p>}
              confirmLabel={t("leaveConfirm")}
              onClose={close}
              onConfirm={() =>
                explained(
                  api.tenants.removeMember({ params: { tenantId: tenant.id, userId: open.member.user.id } }),
                  t,
                  open.member.role === "owner"
                )
                  .then(() => {
                    // The frame's tenant list still names this tenant: load the page again, which
                    // reads the memberships afresh and lands on another tenant (or none).
                    location.reload()
                    return true
                  })}
            />
          )
          : (
            <Confirm
              title={t("removeTitle", { name: nameOf(open.member) })}
              body={<p>{t("removeBody", { name: nameOf(open.member), tenant: tenant.name })}</p>}
              confirmLabel={t("removeConfirm")}
              onClose={close}
              onConfirm={() =>
                explained(
                  api.tenants.removeMember({ params: { tenantId: tenant.id, userId: open.member.user.id } }),
                  t,
                  open.member.role === "owner"
                )
                  .then(() => {
                    pages.reload()
                    notify(t("removed", { name: nameOf(open.member) }))
                    // Confirm closes on a defined result; the removal answers 204 with no body.
                    return true
                  })}
            />
          )
      )}
    </section>
  )
}

const MemberRow = ({ member, self, mayChange, mayRemove, protectedOwner, onChange, onRemove, t, lang }: {
  readonly member: Member
  readonly self: boolean
  readonly mayChange: boolean
  readonly mayRemove: boolean
  readonly protectedOwner: boolean
  readonly onChange: () => void
  readonly onRemove: () => void
  readonly t: Translate<Key>
  readonly lang: Lang
}) => {
  const name = member.user.name ?? member.user.email
  return (
    <tr>
      <th scope="row" data-label={t("name")}>
        <div>
          {member.user.name ?? <span class="hint">{t("noName")}</span>}
          {self && (
            <>
              <Badge tone="info">{t("you")}</Badge>
            </>
          )}
        </div>
      </th>
      <td data-label={t("email")}>
        <span class="email">{member.user.email}</span>
      </td>
      <td data-label={t("role")}>
        <Badge tone={member.role === "owner" ? "ok" : member.role === "admin" ? "info" : "muted"}>
          {t(`role_${member.role}`)}
        </Badge>
      </td>
      <td data-label={t("since")}>{formatDate(member.created_at, lang)}</td>
      <td data-label={t("actions")}>
        <div class="row-actions">
          {mayChange && (
            <button type="button" onClick={onChange}>
              {t("changeRole")}
              <span class="visually-hidden">({name})</span>
            </button>
          )}
          {mayRemove && (
            <button type="button" class="danger" onClick={onRemove}>
              {self ? t("leave") : (
                <>
                  {t("remove")}
                  <span class="visually-hidden">{name}</span>
                </>
              )}
            </button>
          )}
          {protectedOwner && !self && <small>{t("ownerProtected")}</small>}
        </div>
      </td>
    </tr>
  )
}

const RoleDialog = ({ member, name, offerOwner, onClose, onChanged }: {
  readonly member: Member
  readonly name: string
  readonly offerOwner: boolean
  readonly onClose: () => void
  readonly onChanged: (member: Member) => void
}) => {
  const t = useTexts(text)
  const { api, tenant } = useWorkspace()
  const action = useAction()
  const [role, setRole] = useState<Role>(member.role)
  const offered = ROLES.filter((candidate) => offerOwner || candidate !== "owner")
  const submit = (event: Event) => {
    event.preventDefault()
    void action.run(async () => {
      const changed = await api.tenants.changeMemberRole({
        params: { tenantId: tenant.id, userId: member.user.id },
        payload: { role }
      })
      onClose()
      onChanged(changed)
    })
  }
  return (
    <Dialog title={t("changeTitle", { name })} onClose={onClose}>
      <form onSubmit={submit}>
        <fieldset>
          <legend>{t("role")}</legend>
          {offered.map((candidate) => (
            <label key={candidate} class="choice">
              <input
                type="radio"
                name="role"
                value={candidate}
                checked={role === candidate}
                onChange={() => setRole(candidate)}
              />
              <span>
                {t(`role_${candidate}`)}
                <small>{t(`roleHelp_${candidate}`)}</small>
              </span>
            </label>
          ))}
        </fieldset>
        {action.failure && (
          <ErrorNotice
            failure={explain(action.failure, t, { ownerRole: member.role === "owner" || role === "owner" })}
          />
        )}
        <div class="actions">
          <button type="button" onClick={onClose}>{t("cancel")}</button>
          <button type="submit" class="primary" disabled={action.busy || role === member.role}>
            {action.busy ? t("working") : t("changeSubmit")}
          </button>
        </div>
      </form>
    </Dialog>
  )
}

const RoleHelp = ({ t }: { readonly t: Translate<Key> }) => (
  <>
    <h2>{t("rolesTitle")}</h2>
    <dl class="facts">
      {ROLES.map((candidate) => (
        <div key={candidate}>
          <dt>{t(`role_${candidate}`)}</dt>
          <dd>{t(`roleHelp_${candidate}`)}</dd>
        </div>
      ))}
    </dl>
  </>
)
