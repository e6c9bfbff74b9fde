/**
 * Whether a request's Accept-Encoding lets us answer gzip (RFC 9110 §12.5.3): `gzip` or `*` listed with a
 * weight above 0, and gzip not refused by name (`gzip;q=0`). node's fetch (the CLI's client) sends
 * `gzip, deflate`, browsers `gzip, deflate, br, zstd`; a client that sends nothing gets identity.
 */
export const acceptsGzip = (header: string | undefined): boolean => {
  if (header === undefined || header === "") return false
  let star = false
  for (const part of header.split(",")) {
    const [name, ...params] = part.split(";")
    const coding = name.trim().toLowerCase()
    if (coding !== "gzip" && coding !== "x-gzip" && coding !== "*") continue
    let q = 1
    for (const p of params) {
      const [k, v] = p.split("=")
      if (k.trim().toLowerCase() === "q") q = Number(v?.trim())
    }
    const accepted = Number.isFinite(q) && q > 0
    if (coding === "*") star = accepted
    else return accepted
  }
  return star
}
