import type { DocumentStatus } from "./Document.js"
import type { DocumentType } from "./GoodsDocument.js"
import type { Cursor } from "./Pagination.js"

/** What a page of a tenant's documents is narrowed by (SPEC §6's list filters), every one optional. */
export interface DocumentFilters {
  readonly limit: number
  readonly cursor?: Cursor | undefined
  readonly status?: DocumentStatus | undefined
  readonly type?: DocumentType | undefined
  readonly reference?: string | undefined
  readonly createdGte?: Date | undefined
  readonly createdLt?: Date | undefined
  /** A service invoice's taker's normalized CPF or CNPJ, matched exactly. */
  readonly takerTaxId?: string | undefined
  /** A part of the taker's name, matched ignoring case and accents. */
  readonly takerName?: string | undefined
  readonly nfseNumber?: string | undefined
  /** The DPS number, in any series unless `series` is given. */
  readonly number?: number | undefined
  readonly series?: string | undefined
}
