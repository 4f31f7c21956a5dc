"""Chat: personas and npcpy team folders, turns, the prompts, background extraction,
and the chat service (``Conversations``) the facade builds."""
