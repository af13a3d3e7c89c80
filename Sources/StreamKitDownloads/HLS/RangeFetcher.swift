import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fetches one byte range of a resource into an open file, resuming from the byte reached when an
/// attempt fails, and checking that the server sent exactly the bytes asked for.
///
/// Each request asks `Range: bytes=FIRST-LAST` with `If-Range` once a validator is known (RFC 9110
/// §13.1.5), so bytes of two versions of a file are never mixed: a changed file is reported as
/// ``HLSDownloadError/Kind-swift.struct/rangeMismatch``. A server that ignores Range (200 with the
/// whole body) is read up to the range's end and the rest dropped.
struct RangeFetcher {
    let client: HTTPClient
    let headers: HTTPHeaders
    let policy: HTTPClientRetryPolicy

    /// What the server said about the resource.
    struct Outcome: Sendable {
        var validator: HTTPClientRequest.IfRange?
        var completeLength: Int64?
    }

    /// Fetches `range` of `url` into `descriptor`, the byte at offset `o` going to `o - shift`.
    ///
    /// - Parameters:
    ///   - validator: The validator of bytes fetched before from this resource, if any.
    ///   - onWritten: Called with each newly written sub-range, after it is in the file, and the
    ///     validator of the representation its bytes came from.
    /// - Returns: The validator and length the server reported.
    /// - Throws: ``HLSDownloadError`` naming the URL (and the status, for a status error).
    func fetch(
        url: String, range: ByteRange, into descriptor: Int32, shift: Int64, validator: HTTPClientRequest.IfRange?,
        onWritten: (ByteRange, HTTPClientRequest.IfRange?) -> Void
    ) async throws(HLSDownloadError) -> Outcome {
        let timing = client.configuration.retryTiming
        var next = range.lowerBound
        var attempt = 1
        var outcome = Outcome(validator: validator, completeLength: nil)
        while next < range.upperBound {
            if Task.isCancelled { throw .cancelled }
            var request = HTTPClientRequest(url: url, headers: headers)
            request.range = .closed(first: next, last: range.upperBound - 1)
            request.ifRange = outcome.validator
            request.decodesContent = false
            request.bodyIsWrittenToFile = true
            var failure: HTTPClientError?
            let before = next
            do {
                let response = try await client.execute(request)
                let head = response.head
                switch head.rangeOutcome {
                case .partial(let contentRange):
                    guard let got = contentRange.range, got.lowerBound == next, got.upperBound == range.upperBound
                    else {
                        response.body.cancel()
                        throw HLSDownloadError(
                            .rangeMismatch, url: url, status: head.status,
                            detail: "asked for bytes \(next)-\(range.upperBound - 1), the server sent "
                                + "\(contentRange.headerValue): the resource is shorter than its byte range")
                    }
                    if let known = outcome.validator, known.matches(responseHeaders: head.headers) == false {
                        response.body.cancel()
                        throw HLSDownloadError(
                            .rangeMismatch, url: url, status: head.status,
                            detail: "the resource changed while its byte ranges were fetched (validator \(known))")
                    }
                    if outcome.validator == nil { outcome.validator = head.ifRangeValidator }
                    outcome.completeLength = contentRange.completeLength ?? outcome.completeLength
                    var counted: Int64 = 0
                    let start = next
                    do {
                        try await response.body.write(toFileDescriptor: descriptor, at: start - shift) { written in
                            let piece = ByteRange(start + counted, start + written)
                            counted = written
                            next = start + written
                            onWritten(piece, outcome.validator)
                        }
                    } catch let error as HTTPClientError {
                        failure = error
                    } catch {
                        failure = HTTPClientError(.transportFailure, url: url, detail: "\(error)")
                    }
                    if failure == nil && next < range.upperBound {
                        // A body that ends short without an error (libcurl cannot check the length
                        // of an encoded body it does not decode) is a failed attempt, counted and
                        // delayed like any other: asked again at once it looped without end.
                        failure = HTTPClientError(
                            .transportFailure, url: url,
                            detail: "the response ended at byte \(next) of \(range.lowerBound)-\(range.upperBound - 1)")
                    }
                case .ignored(let changed):
                    if changed == true {
                        response.body.cancel()
                        throw HLSDownloadError(
                            .rangeMismatch, url: url, status: head.status,
                            detail: "the resource changed while its byte ranges were fetched")
                    }
                    // The server ignores Range: read the whole body, keeping the bytes asked for.
                    if outcome.validator == nil { outcome.validator = head.ifRangeValidator }
                    outcome.completeLength = head.completeLength
                    var offset: Int64 = 0
                    do {
                        for try await chunk in response.body {
                            let chunkRange = ByteRange(offset, offset + Int64(chunk.count))
                            offset += Int64(chunk.count)
                            if let wanted = chunkRange.intersection(ByteRange(next, range.upperBound)) {
                                let slice = chunk[
                                    Int(
                                        wanted.lowerBound - chunkRange.lowerBound)..<Int(
                                            wanted.upperBound - chunkRange.lowerBound)]
                                try Self.write(Array(slice), to: descriptor, at: wanted.lowerBound - shift)
                                next = wanted.upperBound
                                onWritten(wanted, outcome.validator)
                            }
                            if offset >= range.upperBound {
                                response.body.cancel()
                                break
                            }
                        }
                    } catch let error as HTTPClientError {
                        failure = error
                    }
                    if failure == nil && next < range.upperBound {
                        throw HLSDownloadError(
                            .rangeMismatch, url: url, status: head.status,
                            detail: "the resource is \(offset) bytes, shorter than its byte range "
                                + "\(range.lowerBound)-\(range.upperBound - 1)")
                    }
                case .notSatisfiable(let length):
                    throw HLSDownloadError(
                        .rangeMismatch, url: url, status: head.status,
                        detail: "bytes \(next)-\(range.upperBound - 1) are past the end of the resource"
                            + (length.map { " (\($0) bytes)" } ?? ""))
                case .notRequested, .notApplicable:
                    response.body.cancel()
                    failure = .unexpectedStatus(head.status, url: head.url, retryAfter: head.retryAfter)
                }
            } catch let error as HTTPClientError {
                failure = error
            } catch let error as HLSDownloadError {
                throw error
            } catch {
                failure = HTTPClientError(.transportFailure, url: url, detail: "\(error)")
            }
            guard let error = failure else { continue }
            if error.kind == .cancelled || Task.isCancelled { throw .cancelled }
            if error.kind == .fileWriteFailed {
                throw HLSDownloadError(.writeFailed, url: url, detail: "\(error)", underlying: error)
            }
            if next > before && policy.progressResetsAttempts { attempt = 1 }
            guard
                let delay = policy.delay(
                    afterAttempt: attempt, error: error, randomUnit: timing.randomUnit(), now: timing.now())
            else {
                throw HLSDownloadError(.fileFailed, url: url, detail: "\(error)", underlying: error)
            }
            attempt += 1
            do {
                try await timing.sleep(delay)
            } catch {
                throw .cancelled
            }
        }
        return outcome
    }

    static func write(_ bytes: [UInt8], to descriptor: Int32, at offset: Int64) throws(HLSDownloadError) {
        let failure = bytes.withUnsafeBytes { buffer -> PositionalWrite.Failure? in
            do throws(PositionalWrite.Failure) {
                try PositionalWrite.write(buffer, to: descriptor, at: offset)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw HLSDownloadError(writeFailed: failure.error) }
    }
}
