// The signed-in user: tokens (api.ts), user info and the permission check that hides menus
// and buttons. The server refuses anyway; hiding only spares the operator a 403.
import { useEffect, useState } from "preact/hooks";
import { call, getTokens, onTokens, setTokens, type Result } from "./api";

/** UserInfo is the signed-in user as get_user_info answers it. */
export type UserInfo = Result<"security/auth/get_user_info">;

let info: UserInfo | null = null;
const subs = new Set<(u: UserInfo | null) => void>();

function publish(u: UserInfo | null) {
  info = u;
  subs.forEach((s) => s(u));
}

onTokens((t) => {
  if (!t) publish(null);
});

/** loadUser reads get_user_info for the current tokens (null when signed out). */
export async function loadUser(): Promise<UserInfo | null> {
  if (!getTokens()) {
    publish(null);
    return null;
  }
  const u = await call("security/auth/get_user_info");
  publish(u);
  return u;
}

export function useUser(): UserInfo | null {
  const [u, set] = useState(info);
  useEffect(() => {
    subs.add(set);
    set(info);
    return () => void subs.delete(set);
  }, []);
  return u;
}

/**
 * granted tells whether a permission token pattern grants perm: "*" grants all, "a.*" grants
 * every token under "a.", anything else must match exactly (the built-in checker's rule).
 */
export function granted(patterns: readonly string[], perm: string): boolean {
  return patterns.some((p) => p === "*" || p === perm || (p.endsWith(".*") && perm.startsWith(p.slice(0, -1))));
}

/** can tells whether the signed-in user holds perm. */
export function can(perm: string): boolean {
  return !!info && granted(info.permissionTokens ?? [], perm);
}

/** signOut revokes the token on the server (best effort) and forgets it. */
export async function signOut(): Promise<void> {
  try {
    if (getTokens()) await call("security/auth/logout");
  } catch {
    /* the token may already be gone */
  }
  setTokens(null);
}
