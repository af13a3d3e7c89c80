// Typed wrappers for libcurl's variadic calls, which Swift cannot import.
#ifndef STREAMKIT_CCURL_SHIM_H
#define STREAMKIT_CCURL_SHIM_H

#include <curl/curl.h>

typedef size_t (*sk_curl_data_callback)(char *data, size_t size, size_t count, void *userdata);
typedef int (*sk_curl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                         curl_off_t ultotal, curl_off_t ulnow);
typedef int (*sk_curl_socket_callback)(CURL *easy, curl_socket_t socket, int what, void *userdata,
                                       void *socketdata);
typedef int (*sk_curl_timer_callback)(CURLM *multi, long timeout_ms, void *userdata);
typedef curl_socket_t (*sk_curl_opensocket_callback)(void *userdata, curlsocktype purpose,
                                                     struct curl_sockaddr *address);

static inline CURLcode sk_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode sk_curl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode sk_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode sk_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode sk_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode sk_curl_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                         sk_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode sk_curl_easy_setopt_xferinfo_callback(CURL *handle, sk_curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
static inline CURLcode sk_curl_easy_setopt_opensocket_callback(CURL *handle, sk_curl_opensocket_callback value) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, value);
}

static inline CURLcode sk_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode sk_curl_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode sk_curl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode sk_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode sk_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode sk_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}
static inline CURLMcode sk_curl_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *value) {
    return curl_multi_setopt(handle, option, value);
}
static inline CURLMcode sk_curl_multi_setopt_socket_callback(CURLM *handle, sk_curl_socket_callback value) {
    return curl_multi_setopt(handle, CURLMOPT_SOCKETFUNCTION, value);
}
static inline CURLMcode sk_curl_multi_setopt_timer_callback(CURLM *handle, sk_curl_timer_callback value) {
    return curl_multi_setopt(handle, CURLMOPT_TIMERFUNCTION, value);
}

#endif
