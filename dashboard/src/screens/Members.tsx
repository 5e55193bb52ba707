export const MembersScreen = (_: { readonly route?: ReadonlyArray<string> }) => <p>Members</p>
