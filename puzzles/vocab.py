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
