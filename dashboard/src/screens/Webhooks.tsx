export const WebhooksScreen = (_: { readonly route?: ReadonlyArray<string> }) => <p>Webhooks</p>
