/// Certificates and keys for TLS tests on loopback, made for these tests and nothing else (valid
/// until 2126): a certificate authority, a server certificate it signed for `127.0.0.1` and
/// `localhost`, and a second, unrelated ("rogue") authority and server certificate for the same
/// names, which a pinning evaluator must refuse. Never trust them outside a test.
public enum TestCertificates {
    /// The test certificate authority.
    public static let authority = """
        -----BEGIN CERTIFICATE-----
        MIIBnzCCAUWgAwIBAgIUUE8h7TNAtwLH38XvlIZwUsxrFccwCgYIKoZIzj0EAwIw
        HDEaMBgGA1UEAwwRU3RyYXRhIFRlc3QgY2EgQ0EwIBcNMjYxMTI0MTEzMTA0WhgP
        MjEyNjEwMzExMTMxMDRaMBwxGjAYBgNVBAMMEVN0cmF0YSBUZXN0IGNhIENBMFkw
        EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEX6DE3ENm9QDP7ZAt4c3cpuDbV0D2iWCO
        SZXcST9Er/KdlqhU7BljgLxVpNKHk01EiS9YW1c34m6NQIsCkYa45qNjMGEwHQYD
        VR0OBBYEFJMTHZEfAFX4y3aIYlMTLazEe94qMB8GA1UdIwQYMBaAFJMTHZEfAFX4
        y3aIYlMTLazEe94qMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoG
        CCqGSM49BAMCA0gAMEUCIQDLS6eu+XHQDQqfYwC3Kg9l8SutyN6G1QL4ljVc/Ji2
        awIgX+oUKeELw4Wi4ksgJStp1mcxSWMTGR/cL1ySFqBIYdU=
        -----END CERTIFICATE-----
        """

    /// The server certificate the test authority signed.
    public static let server = """
        -----BEGIN CERTIFICATE-----
        MIIBsjCCAVigAwIBAgIUPtrpVAItSquSOm+Iubc3Bq7zW8QwCgYIKoZIzj0EAwIw
        HDEaMBgGA1UEAwwRU3RyYXRhIFRlc3QgY2EgQ0EwIBcNMjYxMTI0MTEzMTA1WhgP
        MjEyNjEwMzExMTMxMDVaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTBZMBMGByqGSM49
        AgEGCCqGSM49AwEHA0IABAHP4ks5BcvIC8sCPxSg5FwMt/P8D2yzxxexM0pP49Wm
        IDhiUKQOmzeuvXxDT0Wne1pJP1+n63lo59DMkgqU4aujfjB8MBoGA1UdEQQTMBGH
        BH8AAAGCCWxvY2FsaG9zdDAJBgNVHRMEAjAAMBMGA1UdJQQMMAoGCCsGAQUFBwMB
        MB0GA1UdDgQWBBQlu/LQJNhR8m77Ob6WRUGBLXK+WTAfBgNVHSMEGDAWgBSTEx2R
        HwBV+Mt2iGJTEy2sxHveKjAKBggqhkjOPQQDAgNIADBFAiEAkvslMat6FHTsFIQP
        J/a7OcI4/AvJ4kcY0LZZq+v8RE8CICl5sEsASZlMwBJbO92y0Tvuc064N9dtFj0K
        QODsZgJn
        -----END CERTIFICATE-----
        """

    /// The server certificate's private key.
    public static let serverKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgWm9UAQC9GlKWr8mN
        IjT0m2zzVRhNi6NBriRN1B0wTSKhRANCAAQBz+JLOQXLyAvLAj8UoORcDLfz/A9s
        s8cXsTNKT+PVpiA4YlCkDps3rr18Q09Fp3taST9fp+t5aOfQzJIKlOGr
        -----END PRIVATE KEY-----
        """

    /// An unrelated authority.
    public static let rogueAuthority = """
        -----BEGIN CERTIFICATE-----
        MIIBpTCCAUugAwIBAgIUEHXp4RWupBAZTuSzGMuAR+GLe/owCgYIKoZIzj0EAwIw
        HzEdMBsGA1UEAwwUU3RyYXRhIFRlc3Qgcm9ndWUgQ0EwIBcNMjYxMTI0MTEzMTA1
        WhgPMjEyNjEwMzExMTMxMDVaMB8xHTAbBgNVBAMMFFN0cmF0YSBUZXN0IHJvZ3Vl
        IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE7fkSwxlNzb61bfgEs9Tds7Sy
        jV6Ufmauvq4q6gjNKp6CjoSvRfOHqqNPeF7hahC9VzVWaJquwv3j3ng6a2m106Nj
        MGEwHQYDVR0OBBYEFFj8hTcIOeorMCAx+RItx5mwKq3FMB8GA1UdIwQYMBaAFFj8
        hTcIOeorMCAx+RItx5mwKq3FMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQD
        AgEGMAoGCCqGSM49BAMCA0gAMEUCIE4siJth9AgxyYHeLDQzta3iZ3DbIsGm6uIA
        QltlSd0lAiEArWabUhDbyZf087+G8iGPsqMadIn1Ar3Uv729MeydKKo=
        -----END CERTIFICATE-----
        """

    /// A server certificate for the same names, signed by the unrelated authority.
    public static let rogueServer = """
        -----BEGIN CERTIFICATE-----
        MIIBtjCCAVugAwIBAgIUfgHlzYp76X2g14wYSqWnk7K3XwIwCgYIKoZIzj0EAwIw
        HzEdMBsGA1UEAwwUU3RyYXRhIFRlc3Qgcm9ndWUgQ0EwIBcNMjYxMTI0MTEzMTA1
        WhgPMjEyNjEwMzExMTMxMDVaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTBZMBMGByqG
        SM49AgEGCCqGSM49AwEHA0IABGW6ZtXENA6lG8c7gptFEKwa3ntya3nWJLA1ph21
        DncTvF9yRwkRYvJ2YcfC+QIqabrKehNokyLMXdR67xwlgFCjfjB8MBoGA1UdEQQT
        MBGHBH8AAAGCCWxvY2FsaG9zdDAJBgNVHRMEAjAAMBMGA1UdJQQMMAoGCCsGAQUF
        BwMBMB0GA1UdDgQWBBR1FeNHtQN9abietcS9HZDCpsdCQDAfBgNVHSMEGDAWgBRY
        /IU3CDnqKzAgMfkSLceZsCqtxTAKBggqhkjOPQQDAgNJADBGAiEA3/ht1qAZX8Fh
        ULFsND7ZZn9R8pltoGqfIjLqDYEYYF0CIQC6D4+rW9XvcvJgQ6tMQ17sc6NdL3SH
        nc+pGFZuq6Q9mg==
        -----END CERTIFICATE-----
        """

    /// Its private key.
    public static let rogueServerKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSZaYdm5j/rbh6peO
        uFWJZArPtVDmYccD12Qx95Eol8ChRANCAARlumbVxDQOpRvHO4KbRRCsGt57cmt5
        1iSwNaYdtQ53E7xfckcJEWLydmHHwvkCKmm6ynoTaJMizF3Ueu8cJYBQ
        -----END PRIVATE KEY-----
        """
}
