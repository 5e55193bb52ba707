/**
 * The pages the mailed links open (`#/verify-email/<token>`, `#/reset-password/<token>`), and the
 * banner that asks an unverified user to follow theirs. The token is read once from the fragment
 * and the address bar is rewritten without it at once, so it stays in no history entry; it goes to
 * the API in a JSON body, never in a URL.
 */
import { useEffect, useLayoutEffect, useState } from "preact/hooks"
import { type Api, apiFor, Redacted } from "../api.js"
import { type Lang, texts, useLang, useTexts } from "../i18n.js"
import { ErrorNotice, LanguageSelect, useAction } from "../ui.js"

const text = texts({
  en: {
    verifyTitle: "Confirm your e-mail address",
    verifying: "Confirming…",
    verified: "Your e-mail address is confirmed.",
    resetTitle: "Set a new password",
    newPassword: "New password",
    passwordHint: "At least 12 characters. Every open session ends when it is set.",
    submitReset: "Set password",
    working: "Please wait…",
    resetDone: "Your password was changed and every session was ended. Sign in with the new password.",
    invalid_token:
      "This link is no longer valid: it was already used, it expired, or a newer one was sent. Ask for a new one.",
    continue: "Continue to the dashboard",
    banner:
      "Confirm your e-mail address: we sent a link to {email}. Until then you cannot create live API keys or upload the certificate.",
    resend: "Send the link again",
    resent: "A new link is on its way to {email}."
  },
  pt: {
    verifyTitle: "Confirme seu endereço de e-mail",
    verifying: "Confirmando…",
    verified: "Seu endereço de e-mail está confirmado.",
    resetTitle: "Defina uma nova senha",
    newPassword: "Nova senha",
    passwordHint: "Pelo menos 12 caracteres. Todas as sessões abertas são encerradas ao defini-la.",
    submitReset: "Definir senha",
    working: "Aguarde…",
    resetDone: "Sua senha foi alterada e todas as sessões foram encerradas. Entre com a nova senha.",
    invalid_token: "Este link não vale mais: já foi usado, expirou ou um mais novo foi enviado. Peça um novo.",
    continue: "Ir para o painel",
    banner:
      "Confirme seu endereço de e-mail: enviamos um link para {email}. Até lá, não é possível criar chaves de API de produção nem enviar o certificado.",
    resend: "Enviar o link de novo",
    resent: "Um novo link está a caminho de {email}."
  }
})

export const mailLocale = (lang: Lang) => (lang === "pt" ? "pt-BR" : "en") as "pt-BR" | "en"

/** The token of the link that opened the page, taken once; the address bar keeps only the page's name. */
const useLinkToken = (page: string, token: string | undefined) => {
  const [taken] = useState(() => token ?? "")
  // Before the page is first painted: no moment shows the token.
  useLayoutEffect(() => history.replaceState(null, "", `${location.pathname}${location.search}#/${page}`), [])
  return taken
}

const Card = ({ title, children }: { readonly title: string; readonly children: preact.ComponentChildren }) => (
  <main id="main" class="signin">
    <div class="signin-card">
      <div class="signin-head">
        <h1>{title}</h1>
        <LanguageSelect />
      </div>
      {children}
    </div>
  </main>
)

export const VerifyEmailScreen = ({ token }: { readonly token: string | undefined }) => {
  const t = useTexts(text)
  const taken = useLinkToken("verify-email", token)
  const action = useAction()
  const [done, setDone] = useState(false)
  useEffect(() => {
    void action.run(() => apiFor().auth.confirmEmail({ payload: { token: taken } }).then(() => setDone(true)))
  }, [])
  return (
    <Card title={t("verifyTitle")}>
      {done
        ? <p class="notice ok" role="status">{t("verified")}</p>
        : action.failure === undefined
        ? <p role="status">{t("verifying")}</p>
        : action.failure.code === "invalid_token"
        ? (
          <div class="notice error" role="alert">
            <p>{t("invalid_token")}</p>
          </div>
        )
        : <ErrorNotice failure={action.failure} />}
      <p>
        <a href="#/">{t("continue")}</a>
      </p>
    </Card>
  )
}

export const ResetPasswordScreen = ({ token, onPasswordChanged }: {
  readonly token: string | undefined
  readonly onPasswordChanged: () => void
}) => {
  const t = useTexts(text)
  const taken = useLinkToken("reset-password", token)
  const action = useAction()
  const [done, setDone] = useState(false)
  const submit = (event: Event) => {
    event.preventDefault()
    const password = String(new FormData(event.currentTarget as HTMLFormElement).get("password") ?? "")
    void action.run(() =>
      apiFor().auth.confirmPasswordReset({ payload: { token: taken, password: Redacted.make(password) } }).then(() => {
        // Every session ended on the server, this tab's too.
        onPasswordChanged()
        setDone(true)
      })
    )
  }
  return (
    <Card title={t("resetTitle")}>
      {done
        ? <p class="notice ok" role="status">{t("resetDone")}</p>
        : (
          <form onSubmit={submit} aria-label={t("resetTitle")}>
            <label>
              {t("newPassword")}
              <input
                name="password"
                type="password"
                autoComplete="new-password"
                minLength={12}
                required
                aria-describedby="new-password-hint"
              />
              <small id="new-password-hint">{t("passwordHint")}</small>
            </label>
            {action.failure && (action.failure.code === "invalid_token"
              ? (
                <div class="notice error" role="alert">
                  <p>{t("invalid_token")}</p>
                </div>
              )
              : <ErrorNotice failure={action.failure} />)}
            <button type="submit" class="primary" disabled={action.busy}>
              {action.busy ? t("working") : t("submitReset")}
            </button>
          </form>
        )}
      <p>
        <a href="#/">{t("continue")}</a>
      </p>
    </Card>
  )
}

/** Shown to a signed-in user whose address is not confirmed yet, with a way to get a new link. */
export const VerificationBanner = ({ api, email }: { readonly api: Api; readonly email: string }) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const action = useAction()
  const [resent, setResent] = useState(false)
  const resend = () =>
    void action.run(() =>
      api.auth.resendVerification({ payload: { locale: mailLocale(lang) } }).then(() => setResent(true))
    )
  return (
    <section class="notice warning verify-banner" aria-label={t("verifyTitle")}>
      <p>{t("banner", { email })}</p>
      {resent && <p>{t("resent", { email })}</p>}
      {action.failure && <ErrorNotice failure={action.failure} />}
      <button type="button" onClick={resend} disabled={action.busy}>{t("resend")}</button>
    </section>
  )
}
