/** Read-only reports: analytics by period, revenue, churn, SEO — one module each. */
export * from "./Analytics.ts"
export * from "./Revenue.ts"
export * from "./Seo.ts"
