/**
 * The dashboard's frame: signed out, the sign-in and registration forms; signed in, the tenant
 * switcher, the navigation and the screen the URL's fragment names.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { type Api, apiFor, failureOf, type StoredSession, storedSession, storeSession } from "./api.js"
import { initialLang, type Lang, LangContext, saveLang, texts, useTexts } from "./i18n.js"
import { href, useRoute } from "./router.js"
import { ResetPasswordScreen, VerificationBanner, VerifyEmailScreen } from "./screens/AccountLinks.js"
import { CertificateScreen } from "./screens/Certificate.js"
import { CompanyScreen } from "./screens/Company.js"
import { DocumentsScreen } from "./screens/Documents.js"
import { InvitationScreen, MyInvitations } from "./screens/Invitation.js"
import { KeysScreen } from "./screens/Keys.js"
import { MembersScreen } from "./screens/Members.js"
import { OverviewScreen } from "./screens/Overview.js"
import { SignInScreen } from "./screens/SignIn.js"
import { WebhooksScreen } from "./screens/Webhooks.js"
import { Async, Empty, LanguageSelect, useResource } from "./ui.js"
import { type Membership, type User, type Workspace, WorkspaceContext } from "./workspace.js"

const text = texts({
  en: {
    skip: "Skip to content",
    brand: "ETD dashboard",
    tenant: "Tenant",
    signOut: "Sign out",
    navigation: "Sections",
    overview: "Overview",
    keys: "API keys",
    documents: "Documents",
    webhooks: "Webhooks",
    members: "Members",
    company: "Company",
    certificate: "Certificate",
    noTenant: "You are not a member of any tenant yet.",
    noTenantHint:
      "Ask an owner or admin of your company's tenant to invite your email, {email}: the invitation arrives by e-mail and is listed here. To start a new company, register again with its name and tax id.",
    expired: "Your session has ended. Sign in again.",
    role_owner: "owner",
    role_admin: "admin",
    role_developer: "developer",
    signedInAs: "Signed in as {name}"
  },
  pt: {
    skip: "Pular para o conteúdo",
    brand: "Painel ETD",
    tenant: "Conta",
    signOut: "Sair",
    navigation: "Seções",
    overview: "Visão geral",
    keys: "Chaves de API",
    documents: "Documentos",
    webhooks: "Webhooks",
    members: "Membros",
    company: "Empresa",
    certificate: "Certificado",
    noTenant: "Você ainda não é membro de nenhuma conta.",
    noTenantHint:
      "Peça a um proprietário ou administrador da conta da sua empresa que convide o seu e-mail, {email}: o convite chega por e-mail e aparece aqui. Para começar uma nova empresa, cadastre-se de novo com o nome e o CNPJ dela.",
    expired: "Sua sessão terminou. Entre novamente.",
    role_owner: "proprietário",
    role_admin: "administrador",
    role_developer: "desenvolvedor",
    signedInAs: "Conectado como {name}"
  }
})

const SECTIONS = ["overview", "keys", "documents", "webhooks", "members", "company", "certificate"] as const
type Section = (typeof SECTIONS)[number]

const TENANT_KEY = "etd.tenant"

/**
 * Every call of the client, watched for an ended session: the person is sent back to sign in
 * instead of seeing a failure on every screen.
 */
const watched = (api: Api, onExpired: () => void): Api => {
  const groups: Record<string, Record<string, (...args: ReadonlyArray<unknown>) => Promise<unknown>>> = {}
  for (
    const [group, methods] of Object.entries(
      api as unknown as Record<string, Record<string, (...args: ReadonlyArray<unknown>) => Promise<unknown>>>
    )
  ) {
    groups[group] = {}
    for (const [name, call] of Object.entries(methods)) {
      groups[group][name] = (...args) =>
        call(...args).catch((error: unknown) => {
          if (failureOf(error).code === "invalid_session") onExpired()
          throw error
        })
    }
  }
  return groups as unknown as Api
}

export const App = () => {
  const [lang, setLangState] = useState<Lang>(initialLang)
  const setLang = (next: Lang) => {
    saveLang(next)
    setLangState(next)
  }
  useEffect(() => saveLang(lang), [])
  const [session, setSession] = useState<StoredSession | undefined>(storedSession)
  const [expired, setExpired] = useState(false)
  const signIn = (next: StoredSession) => {
    storeSession(next)
    setExpired(false)
    setSession(next)
  }
  const signOut = (becauseExpired: boolean) => {
    storeSession(undefined)
    sessionStorage.removeItem(TENANT_KEY)
    setExpired(becauseExpired)
    setSession(undefined)
  }
  const route = useRoute()
  // The pages of the mailed links open whether or not this tab is signed in.
  const page = route[0] === "verify-email"
    ? <VerifyEmailScreen token={route[1]} />
    : route[0] === "reset-password"
    ? <ResetPasswordScreen token={route[1]} onPasswordChanged={() => signOut(false)} />
    : undefined
  const invitationToken = useInvitationLink()
  const [invitation, setInvitation] = useState<string | undefined>(invitationToken)
  useEffect(() => setInvitation(invitationToken), [invitationToken])
  /** Joined by invitation: the dashboard opens again in that tenant (its memberships read afresh). */
  const joined = (next: StoredSession, tenantId: string) => {
    storeSession(next)
    sessionStorage.setItem(TENANT_KEY, tenantId)
    location.hash = href("overview")
    location.reload()
  }
  return (
    <LangContext.Provider value={{ lang, setLang }}>
      {page ?? (invitation !== undefined
        ? (
          <InvitationScreen
            token={invitation}
            session={session}
            onJoined={joined}
            onLeave={() => {
              setInvitation(undefined)
              location.hash = href("overview")
            }}
          />
        )
        : session === undefined
        ? <SignInScreen onSignedIn={signIn} expired={expired} />
        : <SignedIn session={session} onSignOut={signOut} />)}
    </LangContext.Provider>
  )
}

/**
 * The token of an invitation's link (`#/invitation/<token>`), taken out of the address bar at once
 * so it stays in no history entry or screenshot; kept in memory for the page.
 */
const useInvitationLink = (): string | undefined => {
  const route = useRoute()
  const [token, setToken] = useState<string | undefined>(undefined)
  useEffect(() => {
    if (route[0] === "invitation" && route[1] !== undefined) {
      setToken(route[1])
      history.replaceState(null, "", href("invitation"))
    }
  }, [route[0], route[1]])
  return token
}

const SignedIn = ({ session, onSignOut }: {
  readonly session: StoredSession
  readonly onSignOut: (expired: boolean) => void
}) => {
  const api = useMemo(() => watched(apiFor(session.token), () => onSignOut(true)), [session.token])
  const { resource, reload } = useResource(
    () => Promise.all([api.auth.me(), api.auth.myTenants({ query: { limit: 100 } })]),
    [api]
  )
  const signOut = () => {
    // The session ends on the server too; the page forgets it whatever the answer.
    api.auth.logout().catch(() => undefined).finally(() => onSignOut(false))
  }
  return (
    <Async resource={resource} onRetry={reload}>
      {([user, memberships]) => <Frame api={api} user={user} memberships={memberships.data} onSignOut={signOut} />}
    </Async>
  )
}

const Frame = ({ api, user, memberships, onSignOut }: {
  readonly api: Api
  readonly user: User
  readonly memberships: ReadonlyArray<Membership>
  readonly onSignOut: () => void
}) => {
  const t = useTexts(text)
  const [tenantId, setTenantId] = useState<string | undefined>(() => {
    const saved = sessionStorage.getItem(TENANT_KEY)
    return memberships.some((m) => m.tenant.id === saved) ? saved! : memberships[0]?.tenant.id
  })
  const [announcement, setAnnouncement] = useState("")
  const membership = memberships.find((m) => m.tenant.id === tenantId)
  const tenantResource = useResource(
    () => (tenantId === undefined ? Promise.resolve(undefined) : api.tenants.get({ params: { tenantId } })),
    [api, tenantId]
  )
  const route = useRoute()
  const section: Section = SECTIONS.find((candidate) => candidate === route[0]) ?? "overview"
  const main = useRef<HTMLElement>(null)
  // A screen reader hears the new screen's heading, and keyboard focus starts there.
  useEffect(() => main.current?.focus({ preventScroll: true }), [section, tenantId])
  const workspaceOf = (tenant: Workspace["tenant"], role: Workspace["role"]): Workspace => ({
    api,
    user,
    tenant,
    role,
    canManage: role === "owner" || role === "admin",
    // Read again in place: the screen keeps its state (a message, a form) while the tenant updates.
    refreshTenant: tenantResource.reload,
    notify: (message) => {
      // Cleared first, so the same message twice is announced twice.
      setAnnouncement("")
      setTimeout(() => setAnnouncement(message), 50)
    }
  })
  const chooseTenant = (id: string) => {
    sessionStorage.setItem(TENANT_KEY, id)
    setTenantId(id)
  }
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          event.preventDefault()
          main.current?.focus()
        }}
      >
        {t("skip")}
      </a>
      <header class="top">
        <span class="brand">{t("brand")}</span>
        {memberships.length > 0 && (
          <span class="control switcher">
            <label for="tenant-switcher">{t("tenant")}</label>
            <select id="tenant-switcher" value={tenantId} onChange={(event) => chooseTenant(event.currentTarget.value)}>
              {memberships.map((m) => (
                <option key={m.tenant.id} value={m.tenant.id}>{m.tenant.name} ({t(`role_${m.role}`)})</option>
              ))}
            </select>
          </span>
        )}
        <LanguageSelect />
        <span class="who" title={user.email}>{t("signedInAs", { name: user.name ?? user.email })}</span>
        <button type="button" onClick={onSignOut}>{t("signOut")}</button>
      </header>
      {membership !== undefined && (
        <nav aria-label={t("navigation")} class="sections">
          <ul>
            {SECTIONS.map((name) => (
              <li key={name}>
                <a href={href(name)} aria-current={name === section ? "page" : undefined}>{t(name)}</a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <main id="main" ref={main} tabIndex={-1}>
        {!user.email_verified && <VerificationBanner api={api} email={user.email} />}
        {membership === undefined
          ? (
            <>
              <Empty title={t("noTenant")}>
                <p>{t("noTenantHint", { email: user.email })}</p>
              </Empty>
              <MyInvitations
                api={api}
                onJoined={(joinedTenant) => {
                  sessionStorage.setItem(TENANT_KEY, joinedTenant)
                  location.reload()
                }}
              />
            </>
          )
          : (
            <Async resource={tenantResource.resource} onRetry={tenantResource.reload}>
              {(tenant) =>
                tenant && (
                  <WorkspaceContext.Provider value={workspaceOf(tenant, membership.role)}>
                    <Screen section={section} route={route.slice(1)} key={tenant.id} />
                  </WorkspaceContext.Provider>
                )}
            </Async>
          )}
      </main>
      <div class="announcer" role="status" aria-live="polite">{announcement}</div>
    </>
  )
}

const Screen = ({ section, route }: { readonly section: Section; readonly route: ReadonlyArray<string> }) => {
  switch (section) {
    case "overview":
      return <OverviewScreen />
    case "keys":
      return <KeysScreen />
    case "documents":
      return <DocumentsScreen route={route} />
    case "webhooks":
      return <WebhooksScreen route={route} />
    case "members":
      return <MembersScreen />
    case "company":
      return <CompanyScreen />
    case "certificate":
      return <CertificateScreen />
  }
}
