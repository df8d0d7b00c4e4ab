# ruff: noqa: E501  (prose: one passage per line reads and diffs best)
"""The labelled set's third part: other languages and more hard negatives (issue 11).

Written for this project on 2026-11-23, before anything was run against it: our own prose
about invented sources and people, in French, German, Spanish, Italian, Portuguese and
Dutch. It exists because the first two parts had too few non-English queries (12) and no
non-English or cross-language negative, so the multilingual side's gate and verifier could
not be fitted on the tuning half alone (docs/search.md, "Other languages").

What it adds:
- 27 non-English highlights on subjects of their own (cycling, beekeeping, transhumance,
  furniture restoration, Lisbon, the Dutch polder);
- `crosslang` queries (query and answer in different languages, either way round) and a new
  kind, `non_english` (query and answer in the same language, not English);
- `near_topic` negatives in English next to subjects the set covers, `off_topic` negatives
  written in other languages, and a new negative kind, `near_crosslang`: a query next to a
  subject of the set that no highlight answers, where query and nearby highlights differ in
  language, or the query is not English.

Every list is appended after the earlier parts in `labelled_set.py`, so the fixed split rule
(alternate within each kind, in file order) puts these items in halves without anyone
choosing, and leaves every earlier item in its half.
"""

from __future__ import annotations

SOURCES_LANGUAGES = [
    ("velo", "Carnet de route à vélo", "book", "Bastien Lemarchand"),
    ("imker", "Das Bienenjahr", "book", "Hiltrud Abendroth"),
    ("pastor", "Diario de la trashumancia", "book", "Eusebio Garrastazu"),
    ("bottega", "La bottega del restauratore", "book", "Ugo Scarpellini"),
    ("lisboa", "Cadernos de Lisboa", "book", "Leonor Sarmento"),
    ("polder", "Fietsen in de polder", "article", "Joost van Heemskerk"),
]

# fmt: off
PASSAGES_LANGUAGES: list[tuple[str, str | None, str, str | None, tuple[str, ...]]] = [
    # --- French: cycling ---
    ("fr_velo_pneus", "velo", "Avant une longue étape, vérifiez la pression des pneus : un pneu trop mou fatigue les jambes et crève plus souvent sur les cailloux.", None, ()),
    ("fr_velo_chaine", "velo", "Une chaîne propre et huilée tous les trois cents kilomètres dure deux fois plus longtemps ; la boue et le sable l'usent comme du papier de verre.", None, ()),
    ("fr_velo_vent", "velo", "Le vent de face est l'ennemi du cycliste : baissez la tête, réduisez le braquet et acceptez d'avancer lentement.", None, ()),
    ("fr_velo_col", "velo", "Pour monter un col, partez doucement et gardez une cadence régulière ; ceux qui attaquent au pied finissent à pied.", None, ()),
    ("fr_velo_manger", "velo", "Mangez avant d'avoir faim : une banane toutes les heures évite la fringale qui vide les jambes d'un coup.", None, ()),
    # --- German: beekeeping ---
    ("de_bienen_varroa", "imker", "Die Varroamilbe ist der größte Feind des Bienenvolks; ohne Behandlung im Spätsommer überlebt kaum ein Volk den Winter.", None, ()),
    ("de_bienen_schwarm", "imker", "Im Mai will das Volk schwärmen: die alte Königin zieht mit der Hälfte der Bienen aus, und der Imker muss rechtzeitig Platz schaffen.", None, ()),
    ("de_bienen_honig", "imker", "Honig wird erst geerntet, wenn die Waben verdeckelt sind; sonst ist zu viel Wasser darin und er beginnt zu gären.", None, ()),
    ("de_bienen_winter", "imker", "Im Winter bilden die Bienen eine Traube und zittern mit den Flugmuskeln, um die Königin in der Mitte warm zu halten.", None, ()),
    ("de_bienen_stich", "imker", "Nach einem Stich den Stachel mit dem Fingernagel wegkratzen, nicht herausziehen, sonst drückt man noch mehr Gift in die Haut.", None, ()),
    # --- Spanish: transhumance, sheep ---
    ("es_oveja_esquila", "pastor", "La esquila se hace en primavera, cuando el frío ya no vuelve; una oveja esquilada antes de tiempo puede morir en una helada.", None, ()),
    ("es_perro_pastor", "pastor", "Un buen perro pastor no muerde nunca: mueve el rebaño con la mirada y se tumba cuando el pastor silba.", None, ()),
    ("es_trashumancia", "pastor", "Cada junio subíamos el ganado a los pastos de montaña por las cañadas reales, seiscientos kilómetros a pie en un mes.", None, ()),
    ("es_lobo", "pastor", "El lobo ataca de noche y con niebla; por eso los mastines duermen con el rebaño y llevan carlancas de pinchos en el cuello.", None, ()),
    ("es_queso", "pastor", "El queso de oveja se cuaja con la leche aún tibia del ordeño, y cuanto más tiempo cura en la cueva, más fuerte sabe.", None, ()),
    # --- Italian: furniture restoration ---
    ("it_tarlo", "bottega", "I tarli si riconoscono dai forellini e dalla polvere fine sotto il mobile; un trattamento con permetrina li ferma, ma il legno roso va consolidato.", None, ()),
    ("it_gommalacca", "bottega", "La gommalacca si stende a tampone, in tante mani sottilissime; chi ha fretta e ne mette troppa ottiene una superficie appiccicosa.", None, ()),
    ("it_colla", "bottega", "Per incollare un mobile antico si usa la colla a caldo di coniglio, perché un giorno un altro restauratore dovrà poterlo smontare.", None, ()),
    ("it_umidita", "bottega", "Un mobile antico non va mai messo vicino al termosifone: il legno secco si ritira e le impiallacciature si staccano.", None, ()),
    # --- Portuguese: Lisbon ---
    ("pt_azulejo", "lisboa", "Os azulejos das fachadas de Lisboa não são só decoração: protegem as paredes da chuva e refletem o calor do sol.", None, ()),
    ("pt_fado", "lisboa", "O fado canta-se de pé, com os olhos fechados, e ninguém no restaurante fala enquanto a guitarra toca.", None, ()),
    ("pt_bacalhau", "lisboa", "Dizem que há mais de mil receitas de bacalhau; a primeira regra é demolhar o peixe dois dias em água fria, mudando a água várias vezes.", None, ()),
    ("pt_eletrico", "lisboa", "O elétrico 28 sobe colinas tão íngremes que os travões são verificados todas as manhãs antes de sair da garagem.", None, ()),
    # --- Dutch: the polder, cycling, skating ---
    ("nl_fiets_slot", "polder", "Koop een slot dat minstens de helft van je fiets kost; een goedkoop slot is in tien seconden doorgeknipt.", None, ()),
    ("nl_fiets_regen", "polder", "In Nederland fiets je gewoon door in de regen: een goede regenbroek is belangrijker dan een dure fiets.", None, ()),
    ("nl_dijk", "polder", "De polder ligt onder zeeniveau; zonder gemalen die dag en nacht pompen zou het land binnen weken onderlopen.", None, ()),
    ("nl_schaatsen", "polder", "Als het lang genoeg vriest, schaatsen we over de sloten van dorp naar dorp; het ijs moet minstens tien centimeter dik zijn.", None, ()),
]
# fmt: on

# (q, kind, relevant keys, best first)
QUERIES_LANGUAGES: list[tuple[str, str, tuple[str, ...]]] = [
    # crosslang, English query, non-English answer
    ("how often should I oil my bike chain", "crosslang", ("fr_velo_chaine",)),
    ("riding into a strong headwind", "crosslang", ("fr_velo_vent",)),
    (
        "eat regularly on long bike rides so your legs do not suddenly give out",
        "crosslang",
        ("fr_velo_manger",),
    ),
    ("mites killing bee colonies", "crosslang", ("de_bienen_varroa",)),
    ("when is honey ready to harvest", "crosslang", ("de_bienen_honig",)),
    ("what to do after a bee sting", "crosslang", ("de_bienen_stich",)),
    ("how bees keep warm in winter", "crosslang", ("de_bienen_winter",)),
    ("when to shear sheep", "crosslang", ("es_oveja_esquila",)),
    ("protecting a flock from wolves", "crosslang", ("es_lobo",)),
    ("treating woodworm in antique furniture", "crosslang", ("it_tarlo",)),
    ("keep old furniture away from radiators", "crosslang", ("it_umidita",)),
    ("how to soak salt cod before cooking", "crosslang", ("pt_bacalhau",)),
    ("why Lisbon buildings are covered in tiles", "crosslang", ("pt_azulejo",)),
    ("how expensive should a bike lock be", "crosslang", ("nl_fiets_slot",)),
    ("how thick must ice be for skating on frozen ditches", "crosslang", ("nl_schaatsen",)),
    # crosslang, non-English query, English answer
    ("wie lange sollte ein Mittagsschlaf dauern", "crosslang", ("near_sleep_naps",)),
    (
        "comment éviter les blessures quand on augmente son kilométrage de course",
        "crosslang",
        ("injury_load", "easy_running"),
    ),
    ("¿por qué la olla a presión cocina más rápido?", "crosslang", ("phys_pressure_cooker",)),
    ("perché il ghiaccio galleggia sull'acqua", "crosslang", ("phys_ice_floats",)),
    # crosslang, between two other languages
    ("Wie schützt man Schafe vor Wölfen", "crosslang", ("es_lobo",)),
    ("quand faut-il récolter le miel", "crosslang", ("de_bienen_honig",)),
    # non_english: query and answer in the same language, not English
    ("comment monter un col à vélo sans s'épuiser", "non_english", ("fr_velo_col",)),
    ("pourquoi vérifier les pneus avant de partir", "non_english", ("fr_velo_pneus",)),
    ("Wann schwärmen die Bienen aus?", "non_english", ("de_bienen_schwarm",)),
    ("Was hilft gegen die Milben im Bienenstock", "non_english", ("de_bienen_varroa",)),
    ("un perro que guía las ovejas sin morder", "non_english", ("es_perro_pastor",)),
    ("cómo se hace el queso de oveja", "non_english", ("es_queso",)),
    ("come si stende la gommalacca", "non_english", ("it_gommalacca",)),
    ("quale colla usare per i mobili antichi", "non_english", ("it_colla",)),
    ("como se canta o fado", "non_english", ("pt_fado",)),
    ("waarom moeten de gemalen dag en nacht pompen", "non_english", ("nl_dijk",)),
    ("wat trek je aan als je in de regen fietst", "non_english", ("nl_fiets_regen",)),
    ("que faire avec le pain de la veille", "non_english", ("fr_pain",)),
    ("Was gehört bei wechselhaftem Wetter in den Rucksack", "non_english", ("de_wetter",)),
    ("cuándo hay que regar el huerto", "non_english", ("es_riego",)),
]

# Queries no highlight answers. (q, negative kind)
NEGATIVES_LANGUAGES: list[tuple[str, str]] = [
    # off_topic, in other languages
    ("règles du rugby à quinze", "off_topic"),
    ("Steuererklärung für Selbstständige", "off_topic"),
    ("requisitos para obtener la nacionalidad española", "off_topic"),
    ("storia dell'impero ottomano", "off_topic"),
    ("como tirar o passaporte no Brasil", "off_topic"),
    ("hoe werkt een warmtepomp", "off_topic"),
    # near_topic, English, next to a covered English subject
    ("how to repot an orchid", "near_topic"),
    ("best time of year to see the northern lights", "near_topic"),
    ("how to calculate capital gains tax on shares", "near_topic"),
    ("gluten-free bread recipe", "near_topic"),
    ("symptoms of sleep apnea", "near_topic"),
    ("how to write unit tests for a React component", "near_topic"),
    ("choosing a sleeping bag for winter camping", "near_topic"),
    ("how to tune a guitar by ear", "near_topic"),
    ("why are tides higher at full moon", "near_topic"),
    ("why do cats purr", "near_topic"),
    ("best beginner climbing shoes", "near_topic"),
    ("how to make cold brew coffee", "near_topic"),
    ("how much protein do runners need", "near_topic"),
    ("git submodule update recursive", "near_topic"),
    # near_crosslang: next to a subject of the set, across languages or not in English
    ("how to true a buckled bicycle wheel", "near_crosslang"),
    ("choosing a saddle for long-distance cycling", "near_crosslang"),
    ("Langstroth versus top-bar hives", "near_crosslang"),
    ("making beeswax candles", "near_crosslang"),
    ("sheep breeds with the finest wool", "near_crosslang"),
    ("how to remove rust from old hand tools", "near_crosslang"),
    ("pastel de nata recipe", "near_crosslang"),
    ("history of Dutch windmills", "near_crosslang"),
    ("comment réparer une crevaison sur la route", "near_crosslang"),
    ("Welcher Honig ist am gesündesten", "near_crosslang"),
    ("¿cuántos litros de leche da una oveja al día?", "near_crosslang"),
    ("come si restaura una cornice dorata", "near_crosslang"),
    ("melhores praias perto de Lisboa", "near_crosslang"),
    ("hoe repareer je een lekke band", "near_crosslang"),
    ("comment tailler un pommier en été", "near_crosslang"),
    ("Wie viel kostet ein gutes Teleskop", "near_crosslang"),
    ("recetas de pan sin gluten", "near_crosslang"),
    ("beste Schlafposition bei Rückenschmerzen", "near_crosslang"),
]
