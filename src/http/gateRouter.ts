// Why a second router: the gate runs before Elysia routes (onRequest), to check in docs/api.md §2's order.
import type { Budget } from "../limits/index.ts";
import { POSITIVE_INTEGER, UUID } from "./formats.ts";

/**
 * What the gate enforces for a route before the framework parses anything (docs/api.md §2); each route
 * states its own in the list of the API's routes (src/http/apiRoutes.ts).
 */
export type RoutePolicy = {
  /** Whether X-PARTNER-API-KEY is required. */
  auth: boolean;
  /** The rate budget spent by a call, or null for endpoints that are never throttled. */
  budget: Budget | null;
  /**
   * The body member whose array items the route checks itself, malformed strings included, so that
   * every offending item is reported together and after the batch size (docs/api.md §4).
   */
  itemsChecked?: string;
  /**
   * Top-level body members the route drops, instead of refusing the call, when they are or hold a
   * malformed string (docs/api.md §3: `phone_number` never makes the call fail).
   */
  dropsMalformed?: string[];
};

/**
 * Path parameters the gate validates (docs/api.md §2 step 5). Any positive integer is a well-formed event
 * id, however large: one past the catalog's id range names no event, which is a 404 after the user
 * lookup, not a malformed path.
 */
const paramRules: Record<string, (value: string) => boolean> = {
  user_id: (value) => UUID.test(value),
  event_id: (value) => POSITIVE_INTEGER.test(value),
};

/** A segment with broken percent-encoding decodes to "", which every parameter rule refuses. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return "";
  }
}

type CompiledPath = {
  pattern: string;
  regex: RegExp;
  params: string[];
  methods: Map<string, RoutePolicy>;
};

export type RouteMatch =
  | { kind: "route"; pattern: string; policy: RoutePolicy; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: string[] }
  | { kind: "not_found" };

/** The gate's router: the route a request names, its policy, and which path parameters are malformed. */
export type GateRouter = {
  match(method: string, pathname: string): RouteMatch;
  /** The names of the path parameters that are malformed, in path order. */
  invalidParams(params: Record<string, string>): string[];
};

export function compileGateRouter(policies: Record<string, RoutePolicy>): GateRouter {
  const paths = new Map<string, CompiledPath>();
  for (const [key, policy] of Object.entries(policies)) {
    const [method = "", pattern = ""] = key.split(" ");
    const existing = paths.get(pattern);
    if (existing) {
      existing.methods.set(method, policy);
      continue;
    }
    const params: string[] = [];
    const source = pattern.replace(/:([a-z_]+)/g, (_, name: string) => {
      params.push(name);
      return "([^/]+)";
    });
    paths.set(pattern, {
      pattern,
      regex: new RegExp(`^${source}/?$`),
      params,
      methods: new Map([[method, policy]]),
    });
  }
  return {
    match(method, pathname) {
      for (const path of paths.values()) {
        const found = path.regex.exec(pathname);
        if (!found) continue;
        const policy = path.methods.get(method);
        if (!policy) return { kind: "method_not_allowed", allow: [...path.methods.keys()] };
        const params: Record<string, string> = {};
        path.params.forEach((name, i) => {
          params[name] = decodeSegment(found[i + 1] ?? "");
        });
        return { kind: "route", pattern: path.pattern, policy, params };
      }
      return { kind: "not_found" };
    },
    invalidParams(params) {
      return Object.entries(params).flatMap(([name, value]) => {
        const rule = paramRules[name];
        return rule && !rule(value) ? [name] : [];
      });
    },
  };
}
