import Foundation
import StreamKitMediaCache

/// How the media cache names its entries (`--cache-key`): by the whole URL, or without the query
/// parameters that token-signed URLs change on every request, so that a stream replayed with a
/// newly signed URL is found in the cache.
public struct CacheKeyMode: Hashable, Sendable, ExpressibleByArgument, CustomStringConvertible {
    /// The query parameters the mode drops; empty for `url`.
    public let ignoredParameters: [String]
    /// `signed`: the common signing parameters (``MediaCacheKeyFunction/signingParameters``).
    public let isSigned: Bool

    /// The whole URL names the entry.
    public static let url = CacheKeyMode(ignoredParameters: [], isSigned: false)
    /// The URL without the common signing parameters (token, Expires, Signature, Policy, …).
    public static let signed = CacheKeyMode(ignoredParameters: [], isSigned: true)

    private init(ignoredParameters: [String], isSigned: Bool) {
        self.ignoredParameters = ignoredParameters
        self.isSigned = isSigned
    }

    /// Parses `url`, `signed`, or `ignore:NAME,NAME` (query parameters to drop); `nil` otherwise.
    public init?(argument: String) {
        switch argument {
        case "url": self = .url
        case "signed": self = .signed
        default:
            guard argument.hasPrefix("ignore:") else { return nil }
            let names = argument.dropFirst("ignore:".count).split(separator: ",").map {
                String($0).trimmingCharacters(in: .whitespaces)
            }
            guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty && !$0.contains("=") && !$0.contains("&") }) else {
                return nil
            }
            self.init(ignoredParameters: names, isSigned: false)
        }
    }

    public static var valueDescription: String { "url, signed, or ignore:NAME,NAME" }

    /// The spelling `init(argument:)` reads back.
    public var description: String {
        if isSigned { return "signed" }
        return ignoredParameters.isEmpty ? "url" : "ignore:" + ignoredParameters.joined(separator: ",")
    }

    /// The key function.
    public var function: MediaCacheKeyFunction {
        if isSigned { return .signedURLs }
        return ignoredParameters.isEmpty ? .url : .ignoringQueryParameters(Set(ignoredParameters))
    }
}
