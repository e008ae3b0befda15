export * from "./catalog.ts";
export * from "./media.ts";
export * from "./partners.ts";
export * from "./service.ts";
export * from "./users.ts";
