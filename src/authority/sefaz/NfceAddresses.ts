/**
 * Where each state answers an NFC-e's consumer: the address its QR code opens (per environment)
 * and the address printed for a query by access key (`urlChave`). The states publish them on the
 * Portal Nacional da NFC-e ("URL por UF utilizada QR code"), which our build machines cannot reach;
 * this table was taken from the list the public library `nfephp-org/sped-nfe` maintains
 * (`storage/wsnfe_4.00_mod65.xml`, `NfeConsultaQR`, and `storage/uri_consulta_nfce.json`, commit
 * 3b44ec9 of 23/06/2026), `http://` added where that list leaves the scheme out (the schema asks
 * for it). A state that moves its page is a one-line change here.
 */
import type { Environment } from "../../domain/Principal.js"

export interface NfceAddresses {
  readonly qrCode: Readonly<Record<Environment, string>>
  readonly query: Readonly<Record<Environment, string>>
}

export const NFCE_ADDRESSES: Readonly<Record<string, NfceAddresses>> = {
  AC: {
    qrCode: {
      live: "http://www.sefaznet.ac.gov.br/nfce/qrcode",
      test: "http://www.hml.sefaznet.ac.gov.br/nfce/qrcode"
    },
    query: { live: "http://www.sefaznet.ac.gov.br/nfce/consulta", test: "http://www.sefaznet.ac.gov.br/nfce/consulta" }
  },
  AL: {
    qrCode: {
      live: "http://nfce.sefaz.al.gov.br/QRCode/consultarNFCe.jsp",
      test: "http://nfce.sefaz.al.gov.br/QRCode/consultarNFCe.jsp"
    },
    query: { live: "http://www.sefaz.al.gov.br/nfce/consulta", test: "http://www.sefaz.al.gov.br/nfce/consulta" }
  },
  AM: {
    qrCode: {
      live: "https://sistemas.sefaz.am.gov.br/nfceweb/consultarNFCe.jsp",
      test: "https://sistemas.sefaz.am.gov.br/nfceweb-hom/consultarNFCe.jsp"
    },
    query: { live: "http://www.sefaz.am.gov.br/nfce/consulta", test: "http://www.sefaz.am.gov.br/nfce/consulta" }
  },
  AP: {
    qrCode: {
      live: "https://www.sefaz.ap.gov.br/nfce/nfcep.php",
      test: "https://www.sefaz.ap.gov.br/nfcehml/nfce.php"
    },
    query: { live: "http://www.sefaz.ap.gov.br/nfce/consulta", test: "http://www.sefaz.ap.gov.br/nfce/consulta" }
  },
  BA: {
    qrCode: {
      live: "http://nfe.sefaz.ba.gov.br/servicos/nfce/qrcode.aspx",
      test: "http://hnfe.sefaz.ba.gov.br/servicos/nfce/qrcode.aspx"
    },
    query: { live: "http://www.sefaz.ba.gov.br/nfce/consulta", test: "http://hinternet.sefaz.ba.gov.br/nfce/consulta" }
  },
  CE: {
    qrCode: {
      live: "http://nfce.sefaz.ce.gov.br/pages/ShowNFCe.html",
      test: "http://nfceh.sefaz.ce.gov.br/pages/ShowNFCe.html"
    },
    query: { live: "http://www.sefaz.ce.gov.br/nfce/consulta", test: "http://www.sefaz.ce.gov.br/nfce/consulta" }
  },
  DF: {
    qrCode: {
      live: "http://www.fazenda.df.gov.br/nfce/qrcode",
      test: "http://dec.fazenda.df.gov.br/ConsultarNFCe.aspx"
    },
    query: { live: "http://www.fazenda.df.gov.br/nfce/consulta", test: "http://www.fazenda.df.gov.br/nfce/consulta" }
  },
  ES: {
    qrCode: {
      live: "http://app.sefaz.es.gov.br/ConsultaNFCe/qrcode.aspx",
      test: "http://homologacao.sefaz.es.gov.br/ConsultaNFCe/qrcode.aspx"
    },
    query: { live: "http://www.sefaz.es.gov.br/nfce/consulta", test: "http://www.sefaz.es.gov.br/nfce/consulta" }
  },
  GO: {
    qrCode: {
      live: "https://nfeweb.sefaz.go.gov.br/nfeweb/sites/nfce/danfeNFCe",
      test: "https://nfewebhomolog.sefaz.go.gov.br/nfeweb/sites/nfce/danfeNFCe"
    },
    query: {
      live: "http://www.sefaz.go.gov.br/nfce/consulta",
      test: "http://www.nfce.go.gov.br/post/ver/214413/consulta-nfc-e-homologacao"
    }
  },
  MA: {
    qrCode: {
      live: "http://www.nfce.sefaz.ma.gov.br/portal/consultarNFCe.jsp",
      test: "http://www.hom.nfce.sefaz.ma.gov.br/portal/consultarNFCe.jsp"
    },
    query: { live: "http://www.sefaz.ma.gov.br/nfce/consulta", test: "http://www.sefaz.ma.gov.br/nfce/consulta" }
  },
  MG: {
    qrCode: {
      live: "https://portalsped.fazenda.mg.gov.br/portalnfce/sistema/qrcode.xhtml",
      test: "https://portalsped.fazenda.mg.gov.br/portalnfce/sistema/qrcode.xhtml"
    },
    query: {
      live: "https://portalsped.fazenda.mg.gov.br/portalnfce",
      test: "https://hportalsped.fazenda.mg.gov.br/portalnfce"
    }
  },
  MS: {
    qrCode: { live: "http://www.dfe.ms.gov.br/nfce/qrcode", test: "http://www.dfe.ms.gov.br/nfce/qrcode" },
    query: { live: "http://www.dfe.ms.gov.br/nfce/consulta", test: "http://www.dfe.ms.gov.br/nfce/consulta" }
  },
  MT: {
    qrCode: {
      live: "http://www.sefaz.mt.gov.br/nfce/consultanfce",
      test: "http://homologacao.sefaz.mt.gov.br/nfce/consultanfce"
    },
    query: {
      live: "http://www.sefaz.mt.gov.br/nfce/consultanfce",
      test: "http://homologacao.sefaz.mt.gov.br/nfce/consultanfce"
    }
  },
  PA: {
    qrCode: {
      live: "https://appnfc.sefa.pa.gov.br/portal/view/consultas/nfce/nfceForm.seam",
      test: "https://appnfc.sefa.pa.gov.br/portal-homologacao/view/consultas/nfce/nfceForm.seam"
    },
    query: { live: "http://www.sefa.pa.gov.br/nfce/consulta", test: "http://www.sefa.pa.gov.br/nfce/consulta" }
  },
  PB: {
    qrCode: { live: "http://www.sefaz.pb.gov.br/nfce", test: "http://www.sefaz.pb.gov.br/nfcehom" },
    query: { live: "http://www.sefaz.pb.gov.br/nfce/consulta", test: "http://www.sefaz.pb.gov.br/nfcehom" }
  },
  PE: {
    qrCode: {
      live: "http://nfce.sefaz.pe.gov.br/nfce/consulta",
      test: "http://nfcehomolog.sefaz.pe.gov.br/nfce/consulta"
    },
    query: { live: "http://nfce.sefaz.pe.gov.br/nfce/consulta", test: "http://nfce.sefaz.pe.gov.br/nfce/consulta" }
  },
  PI: {
    qrCode: { live: "http://www.sefaz.pi.gov.br/nfce/qrcode", test: "http://www.sefaz.pi.gov.br/nfce/qrcode" },
    query: { live: "http://www.sefaz.pi.gov.br/nfce/consulta", test: "http://www.sefaz.pi.gov.br/nfce/consulta" }
  },
  PR: {
    qrCode: { live: "http://www.fazenda.pr.gov.br/nfce/qrcode", test: "http://www.fazenda.pr.gov.br/nfce/qrcode" },
    query: { live: "http://www.fazenda.pr.gov.br/nfce/consulta", test: "http://www.fazenda.pr.gov.br/nfce/consulta" }
  },
  RJ: {
    qrCode: {
      live: "https://consultadfe.fazenda.rj.gov.br/consultaNFCe/QRCode",
      test: "http://www4.fazenda.rj.gov.br/consultaNFCe/QRCode"
    },
    query: { live: "http://www.fazenda.rj.gov.br/nfce/consulta", test: "http://www.fazenda.rj.gov.br/nfce/consulta" }
  },
  RN: {
    qrCode: {
      live: "http://nfce.set.rn.gov.br/consultarNFCe.aspx",
      test: "http://hom.nfce.set.rn.gov.br/consultarNFCe.aspx"
    },
    query: { live: "http://www.set.rn.gov.br/nfce/consulta", test: "http://www.set.rn.gov.br/nfce/consulta" }
  },
  RO: {
    qrCode: {
      live: "http://www.nfce.sefin.ro.gov.br/consultanfce/consulta.jsp",
      test: "http://www.nfce.sefin.ro.gov.br/consultanfce/consulta.jsp"
    },
    query: { live: "http://www.sefin.ro.gov.br/nfce/consulta", test: "http://www.sefin.ro.gov.br/nfce/consulta" }
  },
  RR: {
    qrCode: {
      live: "https://www.sefaz.rr.gov.br/servlet/qrcode",
      test: "http://200.174.88.103:8080/nfce/servlet/qrcode"
    },
    query: { live: "http://www.sefaz.rr.gov.br/nfce/consulta", test: "http://www.sefaz.rr.gov.br/nfce/consulta" }
  },
  RS: {
    qrCode: {
      live: "https://www.sefaz.rs.gov.br/NFCE/NFCE-COM.aspx",
      test: "https://www.sefaz.rs.gov.br/NFCE/NFCE-COM.aspx"
    },
    query: { live: "http://www.sefaz.rs.gov.br/nfce/consulta", test: "http://www.sefaz.rs.gov.br/nfce/consulta" }
  },
  SC: {
    qrCode: { live: "https://sat.sef.sc.gov.br/nfce/consulta", test: "https://hom.sat.sef.sc.gov.br/nfce/consulta" },
    query: { live: "https://sat.sef.sc.gov.br/nfce/consulta", test: "https://hom.sat.sef.sc.gov.br/nfce/consulta" }
  },
  SE: {
    qrCode: { live: "http://www.nfce.se.gov.br/nfce/qrcode", test: "http://www.hom.nfe.se.gov.br/nfce/qrcode" },
    query: { live: "http://www.nfce.se.gov.br/nfce/consulta", test: "http://www.hom.nfe.se.gov.br/nfce/consulta" }
  },
  SP: {
    qrCode: {
      live: "https://www.nfce.fazenda.sp.gov.br/qrcode",
      test: "https://www.homologacao.nfce.fazenda.sp.gov.br/qrcode"
    },
    query: {
      live: "https://www.nfce.fazenda.sp.gov.br/NFCeConsultaPublica",
      test: "https://www.homologacao.nfce.fazenda.sp.gov.br/NFCeConsultaPublica"
    }
  },
  TO: {
    qrCode: { live: "http://www.sefaz.to.gov.br/nfce/qrcode", test: "http://homologacao.sefaz.to.gov.br/nfce/qrcode" },
    query: {
      live: "http://www.sefaz.to.gov.br/nfce/consulta",
      test: "http://homologacao.sefaz.to.gov.br/nfce/consulta.jsf"
    }
  }
}
