#if canImport(CStreamKitCurl)
import CStreamKitCurl
import CStreamKitOpenSSL
import CStreamKitSQLite
import Foundation
import StreamKitTestSupport
import Testing

/// The system-library shims link, and the typed wrappers around variadic C calls work.
@Suite struct ShimTests {
    private final class Sink {
        var bytes: [UInt8] = []
    }

    @Test func curlEasyTransferThroughTypedWrappers() async throws {
        let body = Array("shim works".utf8)
        let responder = try ScriptedTCPResponder(steps: [
            .readRequestHead,
            .send(
                ScriptedTCPResponder.httpResponse(
                    status: 200, headers: [("Content-Length", "\(body.count)")], body: body)),
            .close,
        ])
        let handle = try #require(curl_easy_init())
        defer { curl_easy_cleanup(handle) }
        let sink = Sink()
        let url = responder.url("shim").absoluteString
        #expect(sk_curl_easy_setopt_string(handle, CURLOPT_URL, url) == CURLE_OK)
        #expect(sk_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1) == CURLE_OK)
        #expect(sk_curl_easy_setopt_offset(handle, CURLOPT_MAX_RECV_SPEED_LARGE, 0) == CURLE_OK)
        #expect(
            sk_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(sink).toOpaque())
                == CURLE_OK)
        let write: sk_curl_data_callback = { data, size, count, userdata in
            let sink = Unmanaged<Sink>.fromOpaque(userdata!).takeUnretainedValue()
            sink.bytes += UnsafeRawBufferPointer(start: data, count: size * count)
            return size * count
        }
        #expect(sk_curl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, write) == CURLE_OK)
        let headers = curl_slist_append(nil, "X-Test: 1")
        defer { curl_slist_free_all(headers) }
        #expect(sk_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headers) == CURLE_OK)

        let code = curl_easy_perform(handle)  // blocks this test briefly; the responder runs on its own threads
        #expect(code == CURLE_OK)
        var status = 0
        #expect(sk_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK)
        var length: curl_off_t = 0
        #expect(sk_curl_easy_getinfo_offset(handle, CURLINFO_SIZE_DOWNLOAD_T, &length) == CURLE_OK)
        var effective: UnsafeMutablePointer<CChar>?
        #expect(sk_curl_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK)
        #expect(status == 200 && length == body.count && sink.bytes == body)
        #expect(effective.map { String(cString: $0) } == url)
        #expect(responder.requests.first?.contains("X-Test: 1") == true)
        await responder.stop()
    }

    @Test func openSSLAndSQLiteLink() throws {
        #expect(OpenSSL_version_num() >= 0x3000_0000)
        var database: OpaquePointer?
        #expect(sqlite3_open(":memory:", &database) == SQLITE_OK)
        defer { sqlite3_close(database) }
        var statement: OpaquePointer?
        #expect(sqlite3_prepare_v2(database, "SELECT ?", -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        var text = "transient" + String(42)
        #expect(sqlite3_bind_text(statement, 1, text, -1, sk_sqlite_transient()) == SQLITE_OK)
        text = "changed"  // the bound copy is SQLite's own
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        #expect(String(cString: sqlite3_column_text(statement, 0)) == "transient42")
    }
}
#endif
