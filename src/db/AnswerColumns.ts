/** The columns that keep an authority's answer (status, protocol, registered_at, error), as SQL assignments. */
import type { Statement } from "effect/sql"
import type { SqlClient } from "effect/sql/SqlClient"
import type { AuthorityAnswer } from "../domain/AuthorityAnswer.js"

export const answerAssignments = (sql: SqlClient, answer: AuthorityAnswer, at: Date): Statement.Fragment =>
  sql`
    status = ${answer.status},
    protocol = ${answer.status === "registered" ? answer.protocol : null},
    registered_at = ${answer.status === "registered" ? answer.registeredAt : null},
    error = ${answer.status === "refused" ? JSON.stringify(answer.error) : null}::jsonb,
    updated_at = ${at}`
