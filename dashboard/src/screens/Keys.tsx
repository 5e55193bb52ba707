export const KeysScreen = (_: { readonly route?: ReadonlyArray<string> }) => <p>Keys</p>
