/**
 * Joining a tenant by invitation (SPEC §5, §15). The mailed link opens `#/invitation/<token>`: the
 * page shows what the invitation is (tenant, role, who invited, until when); someone new creates
 * their account there (name and password, no company) and lands in the tenant; someone with an
 * account signs in to it first. The token travels only in request bodies, and leaves the address bar
 * as soon as the page has read it. Signed in without a tenant, a person sees the invitations sent to
 * their address and accepts or declines them.
 */
import { useState } from "preact/hooks"
import { type Api, apiFor, Redacted, type StoredSession } from "../api.js"
import { formatDateTime, texts, useLang, useTexts } from "../i18n.js"
import { Async, ErrorNotice, LanguageSelect, useAction, useResource } from "../ui.js"

const text = texts({
  en: {
    title: "Invitation",
    invited: "{inviter} invited you to join {tenant} as {role}.",
    someone: "Someone",
    forAddress: "For {email}, valid until {expires}.",
    newAccount: "Create your account to accept. You don't need a company: you join this one.",
    name: "Your name",
    password: "Choose a password",
    passwordHint: "At least 12 characters.",
    createAndJoin: "Create account and join",
    existing: "An account already uses this address: sign in to it to accept.",
    signInPassword: "Password",
    signInAndJoin: "Sign in and join",
    acceptAs: "You are signed in. Accept the invitation with this account?",
    accept: "Accept invitation",
    working: "Please wait…",
    invalidLink:
      "This invitation link is not valid any more: it was already used, it expired, or a newer one was sent. Ask whoever invited you for a new invitation.",
    otherAccount:
      "You are signed in to another account. Sign out, then open the link again and sign in with the invited address.",
    voided: "Whoever invited you may no longer grant this role. Ask the tenant for a new invitation.",
    wrongPassword: "Email or password is incorrect.",
    toDashboard: "Go to the dashboard",
    role_owner: "owner",
    role_admin: "admin",
    role_developer: "developer",
    mineTitle: "Invitations for you",
    mineItem: "{tenant}, as {role} (invited by {inviter}, until {expires})",
    decline: "Decline",
    unverified: "Confirm your e-mail address to see the invitations sent to it."
  },
  pt: {
    title: "Convite",
    invited: "{inviter} convidou você para participar de {tenant} como {role}.",
    someone: "Alguém",
    forAddress: "Para {email}, válido até {expires}.",
    newAccount: "Crie sua conta para aceitar. Você não precisa de empresa: vai entrar nesta.",
    name: "Seu nome",
    password: "Escolha uma senha",
    passwordHint: "Pelo menos 12 caracteres.",
    createAndJoin: "Criar conta e entrar",
    existing: "Já existe uma conta com este endereço: entre nela para aceitar.",
    signInPassword: "Senha",
    signInAndJoin: "Entrar e aceitar",
    acceptAs: "Você está conectado. Aceitar o convite com esta conta?",
    accept: "Aceitar convite",
    working: "Aguarde…",
    invalidLink:
      "Este link de convite não vale mais: já foi usado, expirou ou um mais novo foi enviado. Peça um novo convite a quem convidou você.",
    otherAccount: "Você está conectado a outra conta. Saia, abra o link de novo e entre com o endereço convidado.",
    voided: "Quem convidou você não pode mais conceder este papel. Peça um novo convite à conta.",
    wrongPassword: "E-mail ou senha incorretos.",
    toDashboard: "Ir para o painel",
    role_owner: "proprietário",
    role_admin: "administrador",
    role_developer: "desenvolvedor",
    mineTitle: "Convites para você",
    mineItem: "{tenant}, como {role} (convidado por {inviter}, até {expires})",
    decline: "Recusar",
    unverified: "Confirme seu endereço de e-mail para ver os convites enviados a ele."
  }
})

type Key = keyof typeof text.en

/** The page's own words for the refusals it expects; anything else as the API says it. */
const known: Partial<Record<string, Key>> = {
  invalid_token: "invalidLink",
  forbidden: "otherAccount",
  invalid_state: "voided",
  invalid_credentials: "wrongPassword"
}

export const InvitationScreen = ({ token, session, onJoined, onLeave }: {
  readonly token: string
  readonly session: StoredSession | undefined
  /** The person joined `tenantId`, with this session (a new one when they registered or signed in here). */
  readonly onJoined: (session: StoredSession, tenantId: string) => void
  readonly onLeave: () => void
}) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const publicApi = apiFor()
  const { resource, reload } = useResource(() => publicApi.invitationAcceptance.lookup({ payload: { token } }), [token])
  const action = useAction()

  const acceptWith = async (current: StoredSession) => {
    const accepted = await apiFor(current.token).invitationAcceptance.accept({ payload: { token } })
    onJoined(current, accepted.tenant.id)
  }
  const submit = (accountExists: boolean, email: string) => (event: Event) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const field = (name: string) => String(form.get(name) ?? "")
    void action.run(async () => {
      if (!accountExists) {
        const name = field("name").trim()
        const accepted = await publicApi.invitationAcceptance.accept({
          payload: { token, password: Redacted.make(field("password")), ...(name === "" ? {} : { name }) }
        })
        onJoined({ token: accepted.token!, expiresAt: accepted.expires_at!.toISOString() }, accepted.tenant.id)
      } else if (session !== undefined) {
        await acceptWith(session)
      } else {
        const login = await publicApi.auth.login({ payload: { email, password: Redacted.make(field("password")) } })
        await acceptWith({ token: login.token, expiresAt: login.expires_at.toISOString() })
      }
    })
  }
  const failure = resource.state === "failed" ? resource.failure : action.failure
  const failureKey = failure === undefined ? undefined : known[failure.code]

  return (
    <main id="main" class="signin">
      <div class="signin-card">
        <div class="signin-head">
          <h1>{t("title")}</h1>
          <LanguageSelect />
        </div>
        {failure !== undefined && (failureKey === undefined
          ? <ErrorNotice failure={failure} onRetry={resource.state === "failed" ? reload : undefined} />
          : (
            <div class="notice error" role="alert">
              <p>{t(failureKey)}</p>
            </div>
          ))}
        {resource.state === "ready" && (() => {
          const { invitation, account_exists } = resource.value
          return (
            <>
              <p>
                {t("invited", {
                  inviter: invitation.invited_by.name ?? t("someone"),
                  tenant: invitation.tenant.name,
                  role: t(`role_${invitation.role}`)
                })}
              </p>
              <p class="hint">
                {t("forAddress", { email: invitation.email, expires: formatDateTime(invitation.expires_at, lang) })}
              </p>
              <form onSubmit={submit(account_exists, invitation.email)} aria-label={t("title")}>
                {!account_exists && (
                  <>
                    <p>{t("newAccount")}</p>
                    <label>
                      {t("name")}
                      <input name="name" autoComplete="name" />
                    </label>
                    <label>
                      {t("password")}
                      <input
                        name="password"
                        type="password"
                        autoComplete="new-password"
                        minLength={12}
                        required
                        aria-describedby="invitation-password-hint"
                      />
                      <small id="invitation-password-hint">{t("passwordHint")}</small>
                    </label>
                  </>
                )}
                {account_exists && session === undefined && (
                  <>
                    <p>{t("existing")}</p>
                    <input type="hidden" name="username" autoComplete="username" value={invitation.email} />
                    <label>
                      {t("signInPassword")}
                      <input name="password" type="password" autoComplete="current-password" required />
                    </label>
                  </>
                )}
                {account_exists && session !== undefined && <p>{t("acceptAs")}</p>}
                <button type="submit" class="primary" disabled={action.busy}>
                  {action.busy
                    ? t("working")
                    : !account_exists
                    ? t("createAndJoin")
                    : session === undefined
                    ? t("signInAndJoin")
                    : t("accept")}
                </button>
              </form>
            </>
          )
        })()}
        {resource.state === "loading" && <p class="loading" role="status">{t("working")}</p>}
        <p>
          <a
            href="#/overview"
            onClick={(event) => {
              event.preventDefault()
              onLeave()
            }}
          >
            {t("toDashboard")}
          </a>
        </p>
      </div>
    </main>
  )
}

/** The invitations sent to a signed-in person's address, to accept or decline (shown while they have no tenant). */
export const MyInvitations = ({ api, onJoined }: {
  readonly api: Api
  readonly onJoined: (tenantId: string) => void
}) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { resource, reload } = useResource(() => api.invitationAcceptance.listMine({ query: { limit: 20 } }), [api])
  const action = useAction()
  const [declined, setDeclined] = useState(0)
  if (resource.state === "failed" && resource.failure.code === "email_unverified") {
    return <p class="notice info">{t("unverified")}</p>
  }
  return (
    <Async resource={resource} onRetry={reload}>
      {(page) =>
        page.data.length > 0 && (
          <section aria-labelledby="my-invitations-title" key={declined}>
            <h2 id="my-invitations-title">{t("mineTitle")}</h2>
            {action.failure && (known[action.failure.code]
              ? (
                <div class="notice error" role="alert">
                  <p>{t(known[action.failure.code]!)}</p>
                </div>
              )
              : <ErrorNotice failure={action.failure} />)}
            <ul>
              {page.data.map((invitation) => (
                <li key={invitation.id}>
                  <p>
                    {t("mineItem", {
                      tenant: invitation.tenant.name,
                      role: t(`role_${invitation.role}`),
                      inviter: invitation.invited_by.name ?? t("someone"),
                      expires: formatDateTime(invitation.expires_at, lang)
                    })}
                  </p>
                  <div class="actions">
                    <button
                      type="button"
                      class="primary"
                      disabled={action.busy}
                      onClick={() =>
                        action.run(async () => {
                          const accepted = await api.invitationAcceptance.acceptMine({
                            params: { invitationId: invitation.id }
                          })
                          onJoined(accepted.tenant.id)
                        })}
                    >
                      {t("accept")}
                      <span class="visually-hidden">{invitation.tenant.name}</span>
                    </button>
                    <button
                      type="button"
                      disabled={action.busy}
                      onClick={() =>
                        action.run(async () => {
                          await api.invitationAcceptance.declineMine({ params: { invitationId: invitation.id } })
                          setDeclined((n) => n + 1)
                          reload()
                        })}
                    >
                      {t("decline")}
                      <span class="visually-hidden">{invitation.tenant.name}</span>
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          </section>
        )}
    </Async>
  )
}
