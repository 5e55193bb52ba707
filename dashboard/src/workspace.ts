/**
 * What every screen of a signed-in person works with: the API client with their session, who
 * they are, the tenant chosen in the switcher and their role in it.
 */
import { createContext } from "preact"
import { useContext } from "preact/hooks"
import type { Api } from "./api.js"

type Awaited2<T> = T extends Promise<infer A> ? A : never
export type User = Awaited2<ReturnType<Api["auth"]["me"]>>
export type Membership = Awaited2<ReturnType<Api["auth"]["myTenants"]>>["data"][number]
export type Tenant = Membership["tenant"]
export type Role = Membership["role"]

export interface Workspace {
  readonly api: Api
  readonly user: User
  readonly tenant: Tenant
  readonly role: Role
  /** Owners and admins manage; developers read (SPEC §5). */
  readonly canManage: boolean
  /** Reads the tenant again (quota, plan) after something changed it. */
  readonly refreshTenant: () => void
  /** A short message for the live region ("Key revoked."). */
  readonly notify: (message: string) => void
}

export const WorkspaceContext = createContext<Workspace | undefined>(undefined)

export const useWorkspace = (): Workspace => {
  const workspace = useContext(WorkspaceContext)
  if (workspace === undefined) throw new Error("useWorkspace outside a signed-in page")
  return workspace
}
