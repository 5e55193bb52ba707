export const DocumentsScreen = (_: { readonly route?: ReadonlyArray<string> }) => <p>Documents</p>
