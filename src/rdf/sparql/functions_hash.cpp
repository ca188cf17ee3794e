// MD5, SHA1, SHA256, SHA384, SHA512 (17.4.6): the hex digest of the
// string's UTF-8 bytes, by libcrypto's EVP interface.
#include <openssl/evp.h>

#include "functions_state.hpp"

namespace rdf::sparql::detail {

std::optional<std::string> digest_hex(std::string_view algorithm, std::string_view data) {
    const EVP_MD* md = algorithm == "MD5"      ? EVP_md5()
                       : algorithm == "SHA1"   ? EVP_sha1()
                       : algorithm == "SHA256" ? EVP_sha256()
                       : algorithm == "SHA384" ? EVP_sha384()
                       : algorithm == "SHA512" ? EVP_sha512()
                                               : nullptr;
    if (md == nullptr) return std::nullopt;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(data.data(), data.size(), digest, &size, md, nullptr) != 1) return std::nullopt;
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * size);
    for (unsigned int i = 0; i < size; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 15];
    }
    return out;
}

} // namespace rdf::sparql::detail
