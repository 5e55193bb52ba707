/** A stored document for unit tests over mocks or pure functions: a queued service invoice, never submitted. */
import type { StoredServiceDocument } from "../../src/documents/DocumentRepo.js"
import { asId } from "../../src/domain/Ids.js"
import { plainAmounts } from "./amounts.js"
import { consultingService } from "./samples.js"

export const storedDocument = (overrides: Partial<StoredServiceDocument> = {}): StoredServiceDocument => ({
  id: asId("document", "doc_0000000000000000000000000a"),
  tenantId: asId("tenant", "ten_x"),
  environment: "test",
  type: "service_invoice",
  status: "queued",
  reference: null,
  series: "1",
  number: 7,
  issueDate: "2026-11-10",
  taker: { tax_id: "52998224725", name: "Maria Tomadora" },
  service: consultingService,
  intermediary: null,
  tax: {},
  amounts: plainAmounts(150000, "2.00"),
  notes: null,
  submissionId: "DPS355030821122233300018100001000000000000007",
  issuerMunicipalityCode: "3550308",
  authority: null,
  rejection: null,
  cancellation: null,
  attempts: 0,
  lastError: null,
  substitutes: null,
  substitutedBy: null,
  takerNotification: null,
  substitution: null,
  createdAt: new Date("2026-11-10T12:00:00Z"),
  updatedAt: new Date("2026-11-10T12:00:00Z"),
  ...overrides
})
