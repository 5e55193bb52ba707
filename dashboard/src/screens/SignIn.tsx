/**
 * Sign in, or register a user, with their company's tenant or without one (someone joining a
 * company accepts its invitation), then sign in at once (SPEC §5).
 */
import { useState } from "preact/hooks"
import { apiFor, Redacted, type StoredSession } from "../api.js"
import { texts, useLang, useTexts } from "../i18n.js"
import { fieldOf } from "../refusals.js"
import { ErrorNotice, LanguageSelect, useAction } from "../ui.js"
import { mailLocale } from "./AccountLinks.js"

const text = texts({
  en: {
    title: "ETD dashboard",
    lead: "Issue NFS-e for your company: manage API keys, documents, webhooks and your certificate.",
    signIn: "Sign in",
    register: "Create an account",
    email: "Email",
    password: "Password",
    passwordHint: "At least 12 characters.",
    name: "Your name",
    company: "Your company (optional)",
    companyHint: "Leave it empty if you are joining a company that invites you: its invitation arrives by e-mail.",
    tenantName: "Company name",
    taxId: "Company tax id (CNPJ or CPF)",
    taxIdHint: "Digits, with or without punctuation.",
    submitSignIn: "Sign in",
    submitRegister: "Create account",
    working: "Please wait…",
    expired: "Your session has ended. Sign in again.",
    invalid_credentials: "Email or password is incorrect.",
    conflict: "That email is already registered. Sign in instead.",
    newHere: "New here?",
    haveAccount: "Already registered?",
    forgot: "Forgot password?",
    forgotTitle: "Reset your password",
    forgotLead: "Enter your account's e-mail address: we will send it a link to set a new password.",
    submitForgot: "Send link",
    forgotSent: "If an account uses {email}, a link is on its way there. It works once, for one hour.",
    back: "Back to sign in"
  },
  pt: {
    title: "Painel ETD",
    lead: "Emita NFS-e pela sua empresa: gerencie chaves de API, documentos, webhooks e seu certificado.",
    signIn: "Entrar",
    register: "Criar conta",
    email: "E-mail",
    password: "Senha",
    passwordHint: "Pelo menos 12 caracteres.",
    name: "Seu nome",
    company: "Sua empresa (opcional)",
    companyHint: "Deixe em branco se você vai entrar numa empresa que convida você: o convite chega por e-mail.",
    tenantName: "Nome da empresa",
    taxId: "CNPJ ou CPF da empresa",
    taxIdHint: "Só números, com ou sem pontuação.",
    submitSignIn: "Entrar",
    submitRegister: "Criar conta",
    working: "Aguarde…",
    expired: "Sua sessão terminou. Entre novamente.",
    invalid_credentials: "E-mail ou senha incorretos.",
    conflict: "Este e-mail já está cadastrado. Entre com ele.",
    newHere: "Ainda não tem conta?",
    haveAccount: "Já tem cadastro?",
    forgot: "Esqueceu a senha?",
    forgotTitle: "Redefinir a senha",
    forgotLead: "Informe o e-mail da sua conta: enviaremos um link para definir uma nova senha.",
    submitForgot: "Enviar link",
    forgotSent: "Se houver uma conta com {email}, um link está a caminho. Ele vale uma vez, por uma hora.",
    back: "Voltar para entrar"
  }
})

export const SignInScreen = ({ onSignedIn, expired }: {
  readonly onSignedIn: (session: StoredSession) => void
  readonly expired: boolean
}) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const [mode, setMode] = useState<"signIn" | "register" | "forgot">("signIn")
  const [sentTo, setSentTo] = useState<string | undefined>(undefined)
  const action = useAction()
  const api = apiFor()

  const signIn = (email: string, password: string) =>
    api.auth.login({ payload: { email, password: Redacted.make(password) } }).then((result) =>
      onSignedIn({ token: result.token, expiresAt: result.expires_at.toISOString() })
    )

  const submit = (event: Event) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const field = (name: string) => String(form.get(name) ?? "")
    const email = field("email")
    const password = field("password")
    void action.run(async () => {
      if (mode === "forgot") {
        await api.auth.requestPasswordReset({ payload: { email, locale: mailLocale(lang) } })
        setSentTo(email)
        return
      }
      if (mode === "register") {
        const name = field("name").trim()
        await api.auth.register({
          payload: {
            email,
            password: Redacted.make(password),
            ...(name === "" ? {} : { name }),
            // Both company fields empty: a person without a company (the server refuses half of one).
            ...(field("tenant_name").trim() === "" && field("tax_id").trim() === ""
              ? {}
              : { tenant: { name: field("tenant_name"), tax_id: field("tax_id") } }),
            locale: mailLocale(lang)
          }
        })
      }
      await signIn(email, password)
    })
  }

  // A conflict at registration is the e-mail's unless it names the company's tax id (proven by
  // another company), which the common refusal text words from its field.
  const failureText = action.failure?.code === "invalid_credentials" ||
      (action.failure?.code === "conflict" &&
        !(action.failure.issues ?? []).some((issue) => fieldOf(issue.path) === "tenant.tax_id"))
    ? t(action.failure.code)
    : undefined

  return (
    <main id="main" class="signin">
      <div class="signin-card">
        <div class="signin-head">
          <h1>{t("title")}</h1>
          <LanguageSelect />
        </div>
        <p>{t("lead")}</p>
        {expired && <p class="notice warning" role="status">{t("expired")}</p>}
        {mode === "forgot"
          ? (
            <form onSubmit={submit} aria-label={t("forgotTitle")}>
              <h2>{t("forgotTitle")}</h2>
              <p>{t("forgotLead")}</p>
              <label>
                {t("email")}
                <input name="email" type="email" autoComplete="username" required />
              </label>
              {sentTo !== undefined && <p class="notice ok" role="status">{t("forgotSent", { email: sentTo })}</p>}
              {action.failure && <ErrorNotice failure={action.failure} />}
              <button type="submit" class="primary" disabled={action.busy}>
                {action.busy ? t("working") : t("submitForgot")}
              </button>
              <button
                type="button"
                class="link"
                onClick={() => (setMode("signIn"), setSentTo(undefined), action.clear())}
              >
                {t("back")}
              </button>
            </form>
          )
          : (
            <form onSubmit={submit} aria-label={mode === "signIn" ? t("signIn") : t("register")}>
              <label>
                {t("email")}
                <input name="email" type="email" autoComplete="username" required />
              </label>
              <label>
                {t("password")}
                <input
                  name="password"
                  type="password"
                  autoComplete={mode === "signIn" ? "current-password" : "new-password"}
                  minLength={mode === "register" ? 12 : undefined}
                  required
                  aria-describedby={mode === "register" ? "password-hint" : undefined}
                />
                {mode === "register" && <small id="password-hint">{t("passwordHint")}</small>}
              </label>
              {mode === "register" && (
                <>
                  <label>
                    {t("name")}
                    <input name="name" autoComplete="name" />
                  </label>
                  <fieldset aria-describedby="company-hint">
                    <legend>{t("company")}</legend>
                    <small id="company-hint">{t("companyHint")}</small>
                    <label>
                      {t("tenantName")}
                      <input name="tenant_name" autoComplete="organization" />
                    </label>
                    <label>
                      {t("taxId")}
                      <input name="tax_id" inputMode="numeric" aria-describedby="taxid-hint" />
                      <small id="taxid-hint">{t("taxIdHint")}</small>
                    </label>
                  </fieldset>
                </>
              )}
              {action.failure && (failureText
                ? (
                  <div class="notice error" role="alert">
                    <p>{failureText}</p>
                  </div>
                )
                : <ErrorNotice failure={action.failure} />)}
              <button type="submit" class="primary" disabled={action.busy}>
                {action.busy ? t("working") : mode === "signIn" ? t("submitSignIn") : t("submitRegister")}
              </button>
              {mode === "signIn" && (
                <button type="button" class="link" onClick={() => (setMode("forgot"), action.clear())}>
                  {t("forgot")}
                </button>
              )}
              {/* The other mode, offered below the form: a screen shows one "Sign in" button, never two. */}
              <p class="mode-switch">
                {mode === "signIn" ? t("newHere") : t("haveAccount")}{" "}
                <button
                  type="button"
                  onClick={() => (setMode(mode === "signIn" ? "register" : "signIn"), action.clear())}
                >
                  {mode === "signIn" ? t("register") : t("signIn")}
                </button>
              </p>
            </form>
          )}
      </div>
    </main>
  )
}
