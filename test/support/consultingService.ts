/** The service most tests' notes describe: systems consulting (LC 116 item 1.01) provided in São Paulo. */
export const consultingService = {
  code: "010101",
  nbs_code: "115013000",
  description: "Consultoria em sistemas",
  municipality_code: "3550308"
} as const
