/** Sample inputs many tests share. */

/** The service most tests' notes describe: systems consulting (LC 116 item 1.01) provided in São Paulo. */
export const consultingService = {
  code: "010101",
  nbs_code: "115013000",
  description: "Consultoria em sistemas",
  municipality_code: "3550308"
} as const

/** A taker with everything a note can say of her: CPF, name, e-mail and an address in São Paulo. */
export const sampleTaker = {
  tax_id: "52998224725",
  name: "Maria da Silva",
  email: "maria@example.com",
  address: {
    street: "Avenida Paulista",
    number: "1000",
    district: "Bela Vista",
    municipality_code: "3550308",
    state: "SP",
    postal_code: "01310100"
  }
} as const
