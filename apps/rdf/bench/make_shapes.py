#!/usr/bin/env python3
"""N-Triples files of shapes other than LUBM's, for load timings
(bench/load_compare.py): deterministic for a seed, never used for tuning.

  watdiv    WatDiv-like: users, products, reviews, offers, retailers and
            genres in WatDiv's vocabularies (86 predicates), tab separators
            between terms, about 12 % of the objects plain literals
            (names, titles, captions, text of reviews), the rest IRIs.
  literals  literal-heavy: about 70 % literal objects, most distinct,
            10-300 characters of text with escapes (\\" \\\\ \\n), non-ASCII
            UTF-8, language tags, xsd:integer / decimal / dateTime /
            boolean typed values.

    make_shapes.py watdiv --triples 1000000 --seed 7 -o watdiv-1m.nt
    make_shapes.py literals --triples 1000000 --seed 7 -o literals-1m.nt

The file ends up with about --triples lines (a whole entity's triples are
written together); a .gz output name is gzip'd (level 1).
"""
from __future__ import annotations

import argparse
import gzip
import random
import sys
from pathlib import Path

WSDBM = "http://db.uwaterloo.ca/~galuc/wsdbm/"
VOCAB = {
    "wsdbm": WSDBM,
    "foaf": "http://xmlns.com/foaf/",
    "dc": "http://purl.org/dc/terms/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rev": "http://purl.org/stuff/rev#",
    "gr": "http://purl.org/goodrelations/",
    "og": "http://ogp.me/ns#",
    "sorg": "http://schema.org/",
    "mo": "http://purl.org/ontology/mo/",
    "gn": "http://www.geonames.org/ontology#",
}

# WatDiv's 86 predicates, grouped by the entity that has them. Each is
# (name, kind, mean count per entity, range) where kind is "iri" (range an
# entity type) or "lit" (a plain literal of the range's words).
USER = [("wsdbm:follows", "iri", 6.0, "User"), ("wsdbm:friendOf", "iri", 12.0, "User"),
        ("wsdbm:likes", "iri", 1.2, "Product"), ("wsdbm:subscribes", "iri", 0.6, "Website"),
        ("wsdbm:makesPurchase", "iri", 0.8, "Purchase"), ("foaf:age", "lit", 0.5, "age"),
        ("foaf:familyName", "lit", 0.3, "name"), ("foaf:givenName", "lit", 0.3, "name"),
        ("sorg:email", "lit", 0.3, "email"), ("sorg:telephone", "lit", 0.2, "phone"),
        ("sorg:nationality", "iri", 0.3, "Country"), ("sorg:jobTitle", "lit", 0.05, "words"),
        ("wsdbm:gender", "iri", 0.5, "Gender"), ("wsdbm:userId", "lit", 0.4, "id"),
        ("dc:Location", "iri", 0.4, "City"), ("rdf:type", "iri", 1.0, "Role"),
        ("sorg:birthDate", "lit", 0.1, "date"), ("foaf:homepage", "iri", 0.05, "Website"),
        ("foaf:name", "lit", 0.05, "name"), ("sorg:knows", "iri", 0.5, "User")]
PRODUCT = [("rdf:type", "iri", 1.0, "ProductCategory"), ("og:title", "lit", 0.9, "title"),
           ("sorg:caption", "lit", 0.3, "words"), ("sorg:description", "lit", 0.2, "text"),
           ("sorg:text", "lit", 0.1, "text"), ("sorg:keywords", "lit", 0.2, "words"),
           ("sorg:contentRating", "lit", 0.1, "rating"), ("sorg:contentSize", "lit", 0.1, "number"),
           ("sorg:datePublished", "lit", 0.05, "date"), ("sorg:expires", "lit", 0.05, "date"),
           ("sorg:language", "iri", 0.2, "Language"), ("sorg:publisher", "lit", 0.05, "name"),
           ("sorg:url", "iri", 0.1, "Website"), ("sorg:author", "iri", 0.1, "User"),
           ("sorg:editor", "iri", 0.05, "User"), ("sorg:actor", "iri", 0.2, "User"),
           ("sorg:director", "iri", 0.05, "User"), ("sorg:producer", "iri", 0.05, "User"),
           ("sorg:trailer", "iri", 0.05, "Website"), ("sorg:wordCount", "lit", 0.05, "number"),
           ("sorg:printPage", "lit", 0.02, "number"), ("sorg:printColumn", "lit", 0.02, "number"),
           ("sorg:printSection", "lit", 0.02, "words"), ("sorg:printEdition", "lit", 0.02, "words"),
           ("sorg:isbn", "lit", 0.02, "id"), ("sorg:bookEdition", "lit", 0.02, "words"),
           ("sorg:numberOfPages", "lit", 0.02, "number"), ("sorg:duration", "lit", 0.05, "number"),
           ("mo:artist", "iri", 0.1, "User"), ("mo:conductor", "iri", 0.02, "User"),
           ("mo:performer", "iri", 0.05, "User"), ("mo:producer", "iri", 0.02, "User"),
           ("mo:record_number", "lit", 0.02, "number"), ("mo:release", "lit", 0.02, "words"),
           ("mo:movement", "lit", 0.02, "words"), ("mo:opus", "lit", 0.02, "number"),
           ("foaf:homepage", "iri", 0.1, "Website"), ("og:tag", "iri", 1.5, "Topic"),
           ("wsdbm:hasGenre", "iri", 1.3, "SubGenre"), ("sorg:award", "lit", 0.02, "words"),
           ("sorg:legalName", "lit", 0.02, "name"), ("sorg:faxNumber", "lit", 0.01, "phone"),
           ("sorg:openingHours", "lit", 0.01, "words"), ("sorg:paymentAccepted", "lit", 0.01, "words"),
           ("sorg:employee", "iri", 0.01, "User"), ("sorg:eligibleRegion", "iri", 0.05, "Country"),
           ("sorg:eligibleQuantity", "lit", 0.02, "number"), ("sorg:priceValidUntil", "lit", 0.02, "date"),
           ("sorg:composer", "iri", 0.02, "User"), ("mo:label", "lit", 0.02, "words")]
REVIEW = [("rev:title", "lit", 0.4, "title"), ("rev:text", "lit", 0.5, "text"),
          ("rev:reviewer", "iri", 1.0, "User"), ("rev:rating", "lit", 0.9, "rating"),
          ("rev:totalVotes", "lit", 0.3, "number")]
OFFER = [("gr:includes", "iri", 1.0, "Product"), ("gr:price", "lit", 1.0, "price"),
         ("gr:serialNumber", "lit", 1.0, "id"), ("gr:validFrom", "lit", 0.4, "date"),
         ("gr:validThrough", "lit", 0.4, "date"), ("sorg:eligibleRegion", "iri", 1.5, "Country"),
         ("sorg:priceValidUntil", "lit", 0.3, "date"), ("sorg:eligibleQuantity", "lit", 0.3, "number")]
RETAILER = [("gr:offers", "iri", 40.0, "Offer"), ("sorg:legalName", "lit", 1.0, "name"),
            ("sorg:openingHours", "lit", 1.0, "words"), ("sorg:paymentAccepted", "lit", 1.0, "words"),
            ("sorg:contactPoint", "lit", 1.0, "phone"), ("sorg:aggregateRating", "lit", 1.0, "rating"),
            ("sorg:employee", "iri", 5.0, "User"), ("sorg:faxNumber", "lit", 0.5, "phone")]
PURCHASE = [("wsdbm:purchaseFor", "iri", 1.0, "Product"), ("wsdbm:purchaseDate", "lit", 1.0, "date")]
WEBSITE = [("sorg:url", "lit", 1.0, "url"), ("wsdbm:hits", "lit", 1.0, "number"),
           ("sorg:language", "iri", 1.0, "Language")]
GENRE = [("og:tag", "iri", 2.0, "Topic"), ("rdf:type", "iri", 1.0, "Genre")]
CITY = [("gn:parentCountry", "iri", 1.0, "Country")]
PRODUCT_LINKS = [("rev:hasReview", "iri", 2.5, "Review")]

WORDS = ("amber quiet river stone violet harbour meadow silver lantern orchard canyon ember willow "
         "crimson falcon glacier hollow ivory juniper kestrel linen marble nectar opal pebble quartz "
         "raven saffron thistle umber velvet walnut yarrow zephyr cobalt dune fern grove heron").split()


def pred_count(p: list) -> int:
    return len({name for name, *_ in p})


class Writer:
    def __init__(self, out, sep: str):
        self.out, self.sep, self.n = out, sep, 0
        self.buf: list[str] = []

    def triple(self, s: str, p: str, o: str) -> None:
        self.buf.append(f"{s}{self.sep}{p}{self.sep}{o} .\n")
        self.n += 1
        if len(self.buf) >= 8192:
            self.flush()

    def flush(self) -> None:
        self.out.write("".join(self.buf).encode("utf-8"))
        self.buf.clear()


def iri(prefixed: str) -> str:
    pre, local = prefixed.split(":", 1)
    return f"<{VOCAB[pre]}{local}>"


def plain(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def watdiv(rng: random.Random, triples: int, w: Writer) -> None:
    # Entity counts in WatDiv's proportions (scale factor 1: 100k triples
    # is about 1k users); users and products make most of the triples.
    per_unit = {"User": 1000, "Product": 250, "Review": 150, "Offer": 90, "Retailer": 1.2, "Purchase": 150,
                "Website": 50}
    fixed = {"City": 240, "Country": 25, "Topic": 250, "SubGenre": 145, "Genre": 21, "Language": 25, "Role": 3,
             "Gender": 2, "ProductCategory": 15}
    groups = [("Retailer", RETAILER), ("Website", WEBSITE), ("City", CITY), ("SubGenre", GENRE),
              ("Purchase", PURCHASE), ("Offer", OFFER), ("Review", REVIEW), ("Product", PRODUCT + PRODUCT_LINKS),
              ("User", USER)]
    mean_of = {kind: sum(m for _, _, m, _ in props) for kind, props in groups}
    fixed_triples = sum(fixed[k] * mean_of[k] for k in fixed if k in mean_of)
    scale = max(0.01, (triples - fixed_triples) / sum(per_unit[k] * mean_of[k] for k in per_unit))
    counts = {k: max(1, int(v * scale)) for k, v in per_unit.items()} | fixed
    def entity(kind: str, i: int) -> str:
        return f"<{WSDBM}{kind}{i}>"
    def any_of(kind: str) -> str:
        # Popularity skews: a few entities are the objects of many triples.
        n = counts[kind]
        return entity(kind, min(n - 1, int(rng.paretovariate(1.2)) - 1) if rng.random() < 0.3 else rng.randrange(n))
    def literal(rng_kind: str) -> str:
        r = rng.random
        if rng_kind == "name": return plain(rng.choice(WORDS).capitalize() + rng.choice(WORDS))
        if rng_kind == "title": return plain(" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))))
        if rng_kind == "words": return plain(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))))
        if rng_kind == "text": return plain(" ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 60))))
        if rng_kind == "email": return plain(f"{rng.choice(WORDS)}{rng.randrange(10**5)}@example.org")
        if rng_kind == "phone": return plain(f"+1-{rng.randrange(100, 999)}-{rng.randrange(10**6, 10**7)}")
        if rng_kind == "date": return plain(f"{rng.randint(2005, 2015)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}")
        if rng_kind == "age": return plain(str(rng.randint(18, 80)))
        if rng_kind == "rating": return plain(str(rng.randint(1, 10)))
        if rng_kind == "price": return plain(f"{rng.randint(1, 999)}.{rng.randrange(100):02}")
        if rng_kind == "url": return plain(f"http://www.{rng.choice(WORDS)}{rng.randrange(10**4)}.com/")
        if rng_kind == "id": return plain(str(rng.randrange(10**9)))
        return plain(str(int(r() * 10**4)))
    def describe(subject: str, props: list) -> None:
        for name, kind, mean, rng_kind in props:
            k = int(mean) + (rng.random() < mean - int(mean))
            for _ in range(k):
                o = any_of(rng_kind) if kind == "iri" else literal(rng_kind)
                w.triple(subject, iri(name), o)
    for kind, props in groups:
        for i in range(counts[kind]):
            describe(entity(kind, i), props)


LANGS = ["en", "de", "fr", "ja", "de-CH", "pt-BR", "zh-Hant"]
XSD = "http://www.w3.org/2001/XMLSchema#"
NON_ASCII = "äöüßéèçñøåłžčšđ€—“”…日本語の文字列中文字符Ελληνικάкириллица"


def literals(rng: random.Random, triples: int, w: Writer) -> None:
    base = "http://example.org/lit/"
    preds = [f"<{base}p{k}>" for k in range(24)]
    def text(lo: int, hi: int) -> str:
        parts, size = [], rng.randint(lo, hi)
        while sum(map(len, parts)) < size:
            x = rng.random()
            if x < 0.85: parts.append(rng.choice(WORDS))
            elif x < 0.93: parts.append("".join(rng.choice(NON_ASCII) for _ in range(rng.randint(1, 6))))
            elif x < 0.96: parts.append('"' + rng.choice(WORDS) + '"')
            elif x < 0.98: parts.append("C:\\" + rng.choice(WORDS))
            else: parts.append("\n")
        return " ".join(parts)[:hi]
    def literal() -> str:
        x = rng.random()
        if x < 0.45: return plain(text(10, 300))
        if x < 0.70: return plain(text(5, 80)) + "@" + rng.choice(LANGS)
        if x < 0.80: return f'"{rng.randrange(-10**6, 10**9)}"^^<{XSD}integer>'
        if x < 0.87: return f'"{rng.randrange(10**6)}.{rng.randrange(10**4)}"^^<{XSD}decimal>'
        if x < 0.95: return (f'"{rng.randint(1990, 2030)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}T'
                             f'{rng.randrange(24):02}:{rng.randrange(60):02}:{rng.randrange(60):02}Z"^^<{XSD}dateTime>')
        return f'"{rng.choice(["true", "false"])}"^^<{XSD}boolean>'
    subjects = max(1, triples // 10)
    while w.n < triples:
        s = f"<{base}item/{rng.randrange(subjects)}>"
        p = rng.choice(preds)
        if rng.random() < 0.7:
            w.triple(s, p, literal())
        elif rng.random() < 0.5:
            w.triple(f"_:b{rng.randrange(subjects)}", p, f"<{base}item/{rng.randrange(subjects)}>")
        else:
            w.triple(s, p, f"<{base}item/{rng.randrange(subjects)}>")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shape", choices=["watdiv", "literals"])
    ap.add_argument("--triples", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.triples < 1:
        ap.error("--triples must be at least 1")
    out = Path(a.output)
    tmp = out.with_name(out.name + ".part")
    rng = random.Random(a.seed)
    with (gzip.open(tmp, "wb", compresslevel=1) if out.suffix == ".gz" else open(tmp, "wb")) as f:
        w = Writer(f, "\t" if a.shape == "watdiv" else " ")
        (watdiv if a.shape == "watdiv" else literals)(rng, a.triples, w)
        w.flush()
    tmp.rename(out)
    print(f"{out}: {w.n} triples", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
