#if canImport(CStreamKitCurl)
import CStreamKitCurl

#if canImport(Glibc)
import Glibc
#endif

/// Maps a libcurl result code, with what libcurl said about it, to an ``HTTPClientError``.
enum CurlFailure {
    /// What libcurl reported about a failed transfer.
    struct Report: Sendable {
        /// The `CURLcode`.
        var code: Int
        /// `CURLOPT_ERRORBUFFER`'s text, or `curl_easy_strerror` when that is empty.
        var message: String
        /// `CURLINFO_OS_ERRNO`.
        var osErrno: Int
        /// `CURLINFO_REDIRECT_URL`: where a refused redirect pointed.
        var redirectURL: String?
        /// Whether a connection was established (`CURLINFO_CONNECT_TIME_T` > 0).
        var connected: Bool
        /// The URL being fetched.
        var url: String
        /// Whether the response head was already complete.
        var headDelivered: Bool
    }

    /// The error for a report.
    static func error(for report: Report) -> HTTPClientError {
        let code = CURLcode(rawValue: UInt32(report.code))
        let message = report.message
        func error(_ kind: HTTPClientError.Kind, url: String? = nil, detail: String? = nil) -> HTTPClientError {
            HTTPClientError(kind, url: url ?? report.url, detail: detail ?? message)
        }
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL:
            if let target = report.redirectURL, !isHTTPScheme(target) {
                return error(
                    .unsupportedScheme, url: target,
                    detail: "redirect from \(report.url) refused: only http and https are followed")
            }
            if message.hasPrefix("Protocol") { return error(.unsupportedScheme) }
            return error(.malformedResponse)  // "Received HTTP/0.9 when not allowed", "Unsupported response code"
        case CURLE_URL_MALFORMAT:
            return error(.invalidRequest)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return error(.couldNotResolveHost)
        case CURLE_COULDNT_CONNECT:
            return error(.connectFailed)
        case CURLE_WEIRD_SERVER_REPLY:
            return error(.malformedResponse)
        case CURLE_PARTIAL_FILE:
            return error(.truncatedBody)
        case CURLE_OUT_OF_MEMORY:
            // libcurl rejects a header line over CURL_MAX_HTTP_HEADER (100 KB) this way.
            // Its message is often just "Out of memory", so the phase tells.
            return report.headDelivered
                ? error(.transportFailure, detail: "curl error 27: \(message)")
                : error(.headerTooLarge, detail: "response head refused by libcurl (a header line over 100 KB)")
        case CURLE_OPERATION_TIMEDOUT:
            return report.connected ? error(.totalTimeout) : error(.connectTimeout)
        case CURLE_TOO_MANY_REDIRECTS:
            return error(.tooManyRedirects)
        case CURLE_GOT_NOTHING:
            return error(.emptyResponse)
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3:
            return error(.connectionReset)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_INITFAILED:
            return error(.tlsFailure)
        case CURLE_BAD_CONTENT_ENCODING:
            return error(.contentDecodingFailed)
        case CURLE_ABORTED_BY_CALLBACK:
            return error(.cancelled)
        default:
            return error(.transportFailure, detail: "curl error \(report.code): \(message)")
        }
    }

    /// Whether `url` starts with `http:` or `https:` (any case).
    static func isHTTPScheme(_ url: String) -> Bool {
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        return (scheme == "http" || scheme == "https") && url.count > scheme.count
    }

    /// libcurl's text for `code`.
    static func describe(_ code: CURLcode) -> String {
        String(cString: curl_easy_strerror(code))
    }
}
#endif
