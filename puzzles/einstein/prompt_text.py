"""The reference's prompts, word for word (§4): one system prompt per action mode, with and without
CoT, for the open models (``src/prompt/selfplay_llama_*.py``), the GPT-4o prompt
(``selfplay_gpt_cot.py``, share_ask with CoT only), and the user prompt templates."""

from __future__ import annotations

_INTRO = (
    "You are playing a cooperative game where you and another player must sort blocks into the correct bins as "
    "quickly as possible. Each player has knowledge about the expected placement of the blocks, such as whether "
    "blocks should be aligned in the same row, column, or diagonal. You can only move blocks into bins near you or "
    "into a shared bin accessible to both players. You cannot access the other player's bins.\n\n"
    "The game concludes when all blocks are correctly placed in the bins. During your turn, you have several options:\n"
    "- Move a block from a bin to another bin. Both bins must be accessible to you.\n"
)
_OPTION_SHARE = (
    "- Share a piece of knowledge with the other player. The shared knowledge should be selected from the knowledge "
    "you have. You cannot share knowledge you do not have.\n"
)
_OPTION_ASK = "- Request knowledge from the other player about a specific block. \n"
_OPTION_PASS = "- Pass your turn.\n"

_GUIDE_REACH = "\n## General Guidance\n- You can only move blocks to bins accessible to you.\n"
_GUIDE_SHARE = {
    "share_ask": "- You can only share knowledge you have. DO NOT share knowledge you do not have, nor request knowledge you already have.\n",
    "ask": "- You can only share knowledge you have and share it when you are asked. DO NOT share knowledge you do not have, nor request knowledge you already have.\n",
    "share": "- You can only share knowledge you have. DO NOT share knowledge you do not have.\n",
    "none": "",
}
_GUIDE_ASK = "- You can only request knowledge about a block that you do not have knowledge of.\n"
_GUIDE_END = (
    "- You can only move one block at a time.\n"
    "- If you or the other player make an incorrect move, it will tell you in the action history. DO NOT make the "
    "same incorrect move again.\n"
)

_FORMAT_HEAD = '\n## Action Format\nYour actions must be formatted as follows:\n- Move block: "move <block> from <bin> to <bin>"\n'
_FORMAT_SHARE = '- Share knowledge: "share <knowledge>"\n'
_FORMAT_ASK = '- Request knowledge: "ask <block>"\n'
_FORMAT_PASS = '- Pass your turn: "pass"\n'
_SEEK_NOTICE = (
    "\nNotice that you cannot initiate sharing the knowledge. Only when you are asked by your partner can you share "
    "the knowledge. \n"
)
_NAMES = (
    "\nwhere we have the following bin names:\n- player1_bin\n- player2_bin\n- commonbin\n- top_left_bin\n"
    "- top_right_bin\n- bottom_left_bin\n- bottom_right_bin\n\n"
    "and the following knowledge types:\n- (<block1>, <block2>, same, row)\n- (<block1>, <block2>, same, column)\n"
    "- (<block1>, <block2>, same, diagonal)\n- (<block1>, <block2>, same, bin)\n- (<block1>, in, <bin>)\n\n"
    "and the following block names:\n- block0\n- block1\n- block2\n...\n\n"
    "Please strictly follow the format above to ensure the game runs smoothly.\n"
)

_E1 = (
    '- "According to my knowledge, block0 should be in top-right bin. Since I cannot reach the top-right bin, I '
    'should pass it to the common bin so that my partner can take it."\n'
)
_E2 = (
    '- "I know block1 and block2 should be in the same row. I also know block1 should be placed in the top-right '
    'bin. So I should move block2 to the top-left bin, which is also in the same row with the top-right bin."\n'
)
_E3_START = "- \"Block1 is not in the correct position according to my knowledge but I cannot reach it. "
_E3 = {
    "share_ask": "I should share my knowledge about block1 with my partner so that it can move it to the correct position.\"\n",
    "share": "I should share my knowledge about block1 with my partner so that it can move it to the correct position.\"\n",
    "ask": "I should wait for my partner to ask about block1 so that I can share the related knowledge.\"\n",
    "none": "I should wait for my partner to put it into the common bin so that I can reach it.\"\n",
}
_E4_START = (
    "- \"All the blocks are in the correct position except block2. However, according to my knowledge I don't know "
    "where the block2 should go in. "
)
_E4 = {
    "share_ask": "I may randomly try one of the block in front of me.\"\n",
    "share": "I may randomly try one of the block in front of me.\"\n",
    "ask": "I may randomly try one of the block in front of me.\"\n",
    "none": "I may randomly try to place it to one of the bins in front of me.\"\n",
}
_E5 = {
    "share_ask": "- \"I don't know where the block3 should go in. I should ask my partner about the knowledge of block3.\"\n",
    "ask": "- \"I don't know where the block3 should go in. I should ask my partner about the knowledge of block3.\"\n",
    "share": "- \"I don't know where the block3 should go in. I should wait for my partner to inform me about where to place block3.\"\n",
    "none": (
        "- \"I can reach Block1 and Block3 since they are in front of me. I know they should be in the same row, but I "
        "do not know either of their exact expected locations. I will try with moving Block1 to the top-left bin as a "
        "start, supposing they are both on the top row.\"\n"
    ),
}
_REASONING = (
    "\n## Reasoning Phase\n\nBefore you take an action, you should reason about the current state of the game. \n\n"
    "Some examples:\n"
)
_OUTPUT = "## Output Format\nPlease provide your output in this format:\n"


def llama_system(mode: str, cot: bool) -> str:
    """The system prompt of ``src/prompt/selfplay_llama_[cot_]{share_ask,share,ask,none}.py``."""
    shares, asks = mode != "none", mode in ("share_ask", "ask")
    text = _INTRO + (_OPTION_SHARE if shares else "") + (_OPTION_ASK if asks else "") + _OPTION_PASS
    text += _GUIDE_REACH + _GUIDE_SHARE[mode] + (_GUIDE_ASK if asks else "") + _GUIDE_END
    text += _FORMAT_HEAD + (_FORMAT_SHARE if shares else "") + (_FORMAT_ASK if asks else "") + _FORMAT_PASS
    text += (_SEEK_NOTICE if mode == "ask" else "") + _NAMES
    if cot:
        text += _REASONING + _E1 + _E2 + _E3_START + _E3[mode] + _E4_START + _E4[mode] + _E5[mode]
        text += ("\n" if mode == "none" else "\n\n") + _OUTPUT + "<THINK><your reasoning></THINK><ACTION><your action></ACTION>\n"
    else:
        text += "\n" + _OUTPUT + "<ACTION><your action></ACTION>\n"
    return text


GPT_SYSTEM = (
    _INTRO + _OPTION_SHARE + _OPTION_ASK + _OPTION_PASS + _GUIDE_REACH + _GUIDE_SHARE["share_ask"]
    + "- You should request knowledge about a block that you do not have knowledge of.\n"
    + "- You can only move one block at a time.\n"
    + "- When the knowledge says two blocks are in the same row, column, or diagonal, it means they are not in the same bin.\n"
    + "- If you or the other player make an incorrect move, it will tell you in the action history. You MUST NOT make "
    "the same incorrect move again. You MUST carefully check the action history before you make a move.\n"
    + "- If your partner ask about the knowledge of a block, you should provide the knowledge if you have it. "
    "Carefully think about which piece of knowledge is the most helpful to share.\n"
    + "- The game will stop players from placing the blocks into the wrong bins. So if you see a block placed in a "
    "bin, that means it is the correct bin for that block.\n\n"
    + "\n## Reasoning Format\nYou need to reason about which action to take before you make the decision. Some "
    "examples of reasoning:\n"
    + _E1 + _E2
    + '- "Block1 is on the same row with block2. Block2 is on the same column with block3. So I can deduce that '
    'block1 and block3 should be on the same diagonal."\n'
    + '- "Block1 is still not moved but I cannot reach it. I should share my knowledge about block1 with my partner '
    'so that it can move it to the correct position."\n'
    + '- "All the blocks are in the correct position except block2. However, according to my knowledge I don\'t know '
    'where the block2 should go in. I may ask my partner about the knowledge of it."\n'
    + '- "I have no knowledge about block2, but I saw block2 is already placed in top-left bin, so I should assume '
    'that it is the correct final location."\n'
    + _FORMAT_HEAD + _FORMAT_SHARE + _FORMAT_ASK + _FORMAT_PASS + _NAMES
    + "\n" + _OUTPUT + "<THINK><your reasoning></THINK><ACTION><your action></ACTION>\n\n"
)

USER_HEAD = (
    "You are Player{player_id} on the {side} side of the game board. You have the following knowledge for your goal:\n"
    "{knowledge}\nCurrently, the blocks are located as follows:\n{blocks}\nYou can access these bins:\n{bins}\n\n"
    "The history of the game till now:\n{move_history}"
)
QUESTION = {
    ("llama", True): "What action would you like to take? Please provide your reasoning before your action.\n",
    ("llama", False): "What action would you like to take?\n",
    ("gpt", True): (
        "What action would you like to take? You need to be fully convinced of your action before you make a move. "
        "Please provide your reasoning before your action. Your reasoning should be concise enough within 3 sentences.\n"
    ),
}
USER_START = {"llama": "\n", "gpt": ""}  # the llama user prompts begin with an empty line


def user_template(prompt: str, cot: bool) -> str:
    """The reference's USER_PROMPT (``{extra}`` is where this engine's additions go, empty by default)."""
    return USER_START[prompt] + USER_HEAD + "{extra}\n\n" + QUESTION[(prompt, cot)]


def system_prompts() -> dict[tuple[str, str, bool], str]:
    """Every system prompt by (prompt family, mode, cot)."""
    out = {("llama", mode, cot): llama_system(mode, cot) for mode in ("share_ask", "share", "ask", "none") for cot in (True, False)}
    out[("gpt", "share_ask", True)] = GPT_SYSTEM
    return out


__all__ = ["GPT_SYSTEM", "llama_system", "system_prompts", "user_template"]
