/**
 * What the goods simulator keeps of an authorized note in its record (SimulatorRepo): the `nfeProc`
 * beside the record's columns, and the authorization a lookup or a duplicate submission answers.
 */
import { Option, Schema } from "effect"
import type { GoodsAuthorization } from "../GoodsAuthority.js"
import type { SimulatorRecord } from "./SimulatorRepo.js"

/** What the simulator keeps of an authorized note beside the record's columns. */
export const KeptNote = Schema.Struct({ xml: Schema.String })

export const authorizationOf = (record: SimulatorRecord): Option.Option<GoodsAuthorization> => {
  if (record.status === "received" || record.accessKey === null || record.protocol === null) return Option.none()
  const kept = Schema.decodeUnknownOption(KeptNote)(record.document)
  return Option.map(kept, ({ xml }) => ({
    accessKey: record.accessKey!,
    protocol: record.protocol!,
    authorizedAt: record.authorizedAt!,
    xml
  }))
}
