export const CertificateScreen = (_: { readonly route?: ReadonlyArray<string> }) => <p>Certificate</p>
