/** Dates as the reader's locale writes them. */
export const formatDate = (d: string | null | undefined) =>
  d === null || d === undefined ? "—" : new Intl.DateTimeFormat(undefined, { dateStyle: "medium" }).format(new Date(d))
