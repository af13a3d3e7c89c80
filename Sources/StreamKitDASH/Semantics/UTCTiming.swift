import StreamKitHLS

/// Where a dynamic MPD says its clock is read (ISO/IEC 23009-1 §5.8.4.11, `UTCTiming`), for the
/// schemes StreamKit reads: a live `@duration` template's window is placed on the server's
/// clock, which need not agree with ours.
public enum UTCTimingSource: Hashable, Sendable {
    /// `urn:mpeg:dash:utc:direct:2014`: the time itself, as the server wrote the MPD.
    case direct(HLSDateTime)
    /// `urn:mpeg:dash:utc:http-xsdate:2014` or `http-iso:2014`: a GET of the URL answers an
    /// `xs:dateTime` / ISO 8601 time.
    case httpDateTime(url: String)
    /// `urn:mpeg:dash:utc:http-head:2014`: the `Date` header of a HEAD of the URL.
    case httpHead(url: String)
}

extension MPD {
    /// The `UTCTiming` sources the MPD lists that StreamKit reads, in the MPD's order (its order
    /// of preference); for the HTTP schemes the first URL of the value, resolved against
    /// `mpdURL`. NTP schemes and unknown ones are left out.
    public func utcTimingSources(mpdURL: String) -> [UTCTimingSource] {
        extra.filter { $0.name == "UTCTiming" }.compactMap { element in
            let attributes = Dictionary(
                element.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            guard let scheme = attributes["schemeIdUri"]?.value, let value = attributes["value"]?.value else {
                return nil
            }
            // The value may list several, separated by white space: the first is used.
            guard let first = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first else {
                return nil
            }
            let url = resolveURI(String(first), against: mpdURL)
            switch scheme {
            case "urn:mpeg:dash:utc:direct:2014", "urn:mpeg:dash:utc:direct:2012":
                return HLSDateTime(String(first)).map(UTCTimingSource.direct)
            case "urn:mpeg:dash:utc:http-xsdate:2014", "urn:mpeg:dash:utc:http-iso:2014",
                "urn:mpeg:dash:utc:http-xsdate:2012", "urn:mpeg:dash:utc:http-iso:2012":
                return .httpDateTime(url: url)
            case "urn:mpeg:dash:utc:http-head:2014", "urn:mpeg:dash:utc:http-head:2012":
                return .httpHead(url: url)
            default:
                return nil
            }
        }
    }
}
