/** The document an NFS-e test reads back through the API, as a service invoice (it is one, or the test fails). */
import type { Document } from "../../src/domain/Document.js"
import type { AnyDocument } from "../../src/domain/GoodsDocument.js"

export const asServiceDocument = (document: AnyDocument): Document => {
  if (document.type !== "service_invoice") throw new Error(`document ${document.id} is a ${document.type}`)
  return document
}
