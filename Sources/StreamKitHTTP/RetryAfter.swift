import Foundation

/// The `Retry-After` response header (RFC 9110 §10.2.3): a delay in whole seconds, or an HTTP
/// date after which to retry. Sent with 503 and 429 (RFC 6585 §4) and with 3xx.
public enum RetryAfter: Hashable, Sendable, CustomStringConvertible {
    /// `Retry-After: 120`: retry after this many seconds.
    case seconds(Int64)
    /// `Retry-After: Fri, 31 Dec 1999 23:59:59 GMT`: retry at this time.
    case date(Date)

    /// Parses a `Retry-After` value; `nil` when it is neither non-negative digits nor an HTTP date.
    public init?(headerValue: String) {
        let text = headerValue.trimmingHTTPWhitespace()
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            // Absurdly long delays saturate instead of failing to parse.
            self = .seconds(text.utf8.count > 18 ? Int64.max : Int64(text)!)
        } else if let date = HTTPDate.parse(text) {
            self = .date(date)
        } else {
            return nil
        }
    }

    /// The delay from `now`; never negative (a date in the past means "now").
    public func delay(now: Date) -> Duration {
        switch self {
        case .seconds(let seconds):
            return .seconds(seconds)
        case .date(let date):
            let interval = date.timeIntervalSince(now)
            return interval > 0 ? .milliseconds(Int64((interval * 1000).rounded(.up))) : .zero
        }
    }

    /// The header value.
    public var headerValue: String {
        switch self {
        case .seconds(let seconds): String(seconds)
        case .date(let date): HTTPDate.format(date)
        }
    }

    public var description: String { headerValue }
}
