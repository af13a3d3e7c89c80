import Foundation
import StreamKitDASH
import Testing

/// Inputs the fuzz target (Fuzz/MPDParser) found, with the properties it checks.
struct MPDFuzzRegressionTests {
    static let inputs = [
        "PD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0idXRmLTgiPz4KPE1QRCB4bWxuczp4c2k9Imh0dHA6Ly93d3cudzMub3JnLzYwMDEvWE1MU2NoZW1hLWluc3RhbmNlIgoJeG1sbnM9InVybjptcGVnOmRhc2g6c2NoZW1hOm1wZDoyMDExIgoJeG1sbnM6eGxpbms9Imh0dNRwOi8vd3d3LnczLm9yZy8xOTk4L3hsaW5rIgoJeHNpOnNjaGVtYUxvY2F0aW9uPSJ1cm46bXBlZzpEQVNIOnNjaGVtYTpNUEQ6MjAxMSBodHRwOi8vc3RhbmRhcmRzLmlzby5vcmcvaXR0Zi9QdWJsaWNseUF2YWlsYWJsZVN0YW5kYXJkcy9NUEVHLURBU0hfc2NoZW1hX2ZpbGVzL0RBU0gtTVBELnhzZCIKCXByb2ZpbGVzPSJ1cm46bXBlZzpkYXNoOnByb2ZpbGU6aXNvZmYtbGl2ZTo0MDIyIgoJdHlwZT0ic3RhdGljIgoJbWVkaWFQcmVzZW50YXRpb25EdXJhdGlvbj0iUFQ2MDBTIgoJbWF4U2VnbTBlbnREdXJhdGlvbj0iUFQyLjBTIgoJbWluQnVmZmVyVGltZT0iUFQ0LjBTIj4KCTxQcm9ncmFtSW5mb3JtYXRpb24+Cgk8L1Byb2dyYW1JbmZvcm1hdGlvbj4KCTxTZXJ2aWNlRGVzY3JpcHRpb24gaWQ9IjAiPjsKCTwvU2VydmljZURlc2NyaXB0aW9uPgoJPFBlcmlvZCBpZD0iMCIgc3RhcnQ9IlBUMC4wUyI+CgkJPEFkYXB0YXRpb25TZXQgaWQ9IjAiIGNvbnRlbnRUeXBlPSJ2aWRlbyIgc3RhcnRXaXRoU0FQPSIxIiBzZWdtZW50QWxpZ25tZW50PSJ0cnVlIiBiaXRzdHJlYW1Td2l0Y2hpbmc9InRydWUiIGZyYW1lUmF0ZT0iMjUvMSIgbWF4V2lkdGg9IjMyMCIgbWF4SGVpZ2h0PSIxODAiIHBhcj0iMTY6OSI+CgkJCTxSZXByZXNlbnRhdGlvbiBpZD0iMCIgbWltZVR5cGU9InZpZGVvL21wNCIgY29kZWNzPSJhdmMxLmY0MDAwYyIgYmFuZHdpZHRoPSI0OTYwNSIgd2lkdGg9IjMyMCIgaGVpZ2h0PSIxODAiIHNhcj0iMToxIj4KCQkJCTxTZWdtZW50VGVtcGxhdGUgdGltZXNjYWxlPSIxMDAwMDAwIiBkdXJhdGlvbj0iMjAwMDAwMCIgaW5pdGlhbGl6YXRpb249ImluaXQtc3RyZWFtJFJlcHJlc2VudGF0aW9uSUQkLm00cyIgbWVkaWE9ImNodW5rLXN0cmVhk9dSZXByZXNlbnRhdGlvbklEJCUkTnVtYmVyJTE0ZCQubTRzIiBzdGFydE51bWJlcj0iMSI+CgkJCQk8L1NlZ21lbnRUZW1wbGF0ZT4KCQkJPC9SZXByZXNlbnRhdGlvbj4KCQk8L0FkYXB0YXRpb25TZXQ+Cgk8L1BlcmlvZD4KPC9NUEQ+Cg==",
        "PD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0idXRmLTgiPz4KPE1QRCB4bWxuczp4c2k9Imh0dHA6Ly93d3cudzMub3JnLzIwMDEvWE1MU2NoZW1hLWluc3RhbmNlIgoJ//////////////////////////////////////////////////////////////////94bWxucz0idXJuOm1wZWc6ZGFzaDpzY2hlbWE6bXBkOjIwMTEiCgl4bWxuczp4bGluaz0iaHR0cDovL3d3dy53My5vcmcvMTk5OS94bGluayIKCXhzaTpzY2hlbWFMb2NhdGlvbj0idXJuOm1wZWc6REFTSDpzY2hlbWE6TVBEOjIwMTEgaHR0cDovL3N0YW5kYXJkcy5pc28ub3JnL2l0dGYvUHVibGljbHlBdmFpbGFibGVTdGFuZGFyZHMvTVBFRy1EQVNIX3NjaGVtYV9maWxlcy9EQVNILU1QRC54c2QiCglwcm9maWxlcz0idXJuOm1wZWc6ZGFzaDpwcm9maWxlOmlzb2ZmLWxpdmU6MjAxMSIKCXR5cGU9InN0YXRpYyIKCW1lZGlhUHJlc2VudGF0aW9uRHVyYXRpb249IlBUNi4wUyIKCW1heFNlZ21lbnREdXJhdGlvbj0iUFQyLjBTIgoJbWluQnVmZmVyVGltZT0iUFQ0LjBTIj4KCTxQcm9ncmFtSW5mb3JtYXRpb24+Cgk8L1Byb2dyYW1JbmZvcm1hdGlvbj4KCTxTZXJ2aWNlRGVzY3JpcHRpb24gaWQ9IjAiPgoJPC9TZXJ2aWNlRGVzY3JpcHRpb24+Cgk8UGVyaW9kIGlkPSIwIiBzdGFydD0iUFQwLjBTIj4KCQk8QWRhcHRhdGlvblNldCBpZD0iMCIgY29udGVudFR5cGU9InZpZGVvIiBzdGFydFdpdGhTQVA9IjEiIHNlZ21lbnRBbGlnbm1lbnQ9InRydWUiIGJpdHN0cmVhbVN3aXRjm5aRmD0idHJ1ZSIgZnJhbWVSYXRlPSIyNC8xIiBtYXhXaWR0aD0iMzIwIiBtYXhIZWlnaHQ9IjE4MCIgcGFyPSIxNjo5Ij4KCQkJPFJlcHJlc2VudGF0aW9uIGlkPSIwIiBtaW1lVHlwZT0idmlkZW8vbXA0IiBjb2RlY3M9ImF2YzEuZjQwMDBjIiBiYW5kd2lkdGg9IjQ5NjA1IiB3aWR0aD0iMzIwIiBoZWlnaHQ9IjE4MCIgc2FyPSIxOjEiPgoJCQkJPFNlZ21lbnRUZW1wbGF0ZSB0aW1lc2NhbGU9IjEwMDAwMDAiIGR1cmF0aW9uPSIyMDAwMDAwIiBpbml0aWFsaXphdGlvbj0iaW5pdC1zdHJlYW0kUmVwcmVzZW50YXRpb25JRCQubTRzIiBtZWRpYT0iY2h1bmstc3RyZWFtJFJlcHJlc2VudGF0aW9uSUQkLSROdW1iZXIlMDVkJC5tNHMiIHN0YXJ0TnVtYmVyPSIxIj4KCQkJCTwvU2VnbWVudFRlbXBsYXRlPgoJCQk8L1JlcHJlc2VudGF0aW9uPgoJCTwvQWRhcHRhdGlvblNldD4KCTwvUGVyaW9kPgo8L01QRD4K",
    ]

    @Test(arguments: inputs)
    func whatIsWrittenReadsBackAndWritesTheSame(input: String) throws {
        let bytes = Array(try #require(Data(base64Encoded: input)))
        let limits = DASHXML.Limits(maximumDepth: 32, maximumElements: 10_000)
        guard let mpd = try? MPD.parse(bytes, limits: limits) else { return }
        let written = mpd.serialized()
        let again = try MPD.parse(Array(written.utf8))
        #expect(again.serialized() == written, "\(written)")
        for (index, period) in mpd.periods.enumerated() {
            for set in period.adaptationSets {
                for representation in set.representations {
                    guard
                        let resolved = try? mpd.resolve(
                            periodIndex: index, adaptationSet: set, representation: representation,
                            mpdURL: "https://example.com/a/manifest.mpd", maximumSegments: 10_000)
                    else { continue }
                    #expect(resolved.segments.count <= 10_000)
                    #expect(resolved.segments.allSatisfy { $0.duration >= 0 })
                }
            }
        }
    }
}
