"""Word lists for AsymPuzl: single plain English words, all lower case.

40 of each, enough for a puzzle of 30 pieces plus 10 distractors.
"""

SHAPES: tuple[str, ...] = (
    "square", "circle", "triangle", "rectangle", "pentagon", "hexagon", "heptagon", "octagon",
    "nonagon", "decagon", "star", "heart", "diamond", "oval", "ellipse", "crescent",
    "cross", "arrow", "cube", "cone", "cylinder", "sphere", "pyramid", "prism",
    "rhombus", "trapezoid", "parallelogram", "kite", "ring", "spiral", "torus", "wedge",
    "arc", "chevron", "crown", "shield", "droplet", "bolt", "cloud", "moon",
)

COLORS: tuple[str, ...] = (
    "red", "blue", "green", "yellow", "orange", "purple", "pink", "brown",
    "black", "white", "gray", "cyan", "magenta", "teal", "navy", "maroon",
    "olive", "lime", "indigo", "violet", "gold", "silver", "beige", "turquoise",
    "coral", "crimson", "amber", "lavender", "ivory", "tan", "salmon", "khaki",
    "plum", "mint", "peach", "ochre", "scarlet", "azure", "emerald", "ruby",
)

SHAPE_SET = frozenset(SHAPES)
COLOR_SET = frozenset(COLORS)

assert len(SHAPE_SET) == len(SHAPES) and len(COLOR_SET) == len(COLORS)

PATTERNS: tuple[str, ...] = (
    "striped", "dotted", "checked", "plain", "spotted", "wavy", "zigzag", "plaid",
    "floral", "marbled", "speckled", "banded", "ringed", "hatched", "scaled", "dappled",
    "mottled", "ribbed", "quilted", "woven", "knitted", "embossed", "frosted", "glossy",
    "matte", "rippled", "crinkled", "pleated", "tiled", "barred", "streaked", "flecked",
    "veined", "crackled", "brushed", "etched", "gilded", "laced", "beaded", "fringed",
)

MATERIALS: tuple[str, ...] = (
    "wood", "glass", "steel", "stone", "paper", "clay", "wool", "silk",
    "cotton", "leather", "copper", "brass", "iron", "marble", "granite", "plastic",
    "rubber", "bamboo", "cork", "wax", "ice", "bone", "shell", "pearl",
    "tin", "lead", "zinc", "chalk", "slate", "felt", "linen", "denim",
    "velvet", "satin", "hemp", "jute", "resin", "foam", "coal", "sand",
)

assert len(set(PATTERNS)) == len(PATTERNS) == 40 and len(set(MATERIALS)) == len(MATERIALS) == 40
